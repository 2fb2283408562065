// File I/O (issue 14, defects 2 and 5): outputs replace only regular files (following
// symlinks), devices, FIFOs and empty paths are refused, and an unreadable folder is a clear
// "cannot open", never a filesystem exception. Issue 24: the temporary file is exclusive (a
// link planted at its old predictable name is never followed), devices are refused as inputs
// while pipes still read, and an output's folder is checked before any work.
#include "core/file_io.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/errors.h"

namespace remat {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("remat_file_io_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(FileIoTest, WritesAndReplacesRegularFiles) {
  const std::string path = (dir_ / "a.json").string();
  WriteFileAtomically(path, "one");
  WriteFileAtomically(path, "two");
  EXPECT_EQ(ReadFileText(path), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);  // no temp left
}

TEST_F(FileIoTest, FollowsASymlinkAndKeepsIt) {
  fs::create_symlink("target.json", dir_ / "link.json");  // dangling until written
  WriteFileAtomically((dir_ / "link.json").string(), "text");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(ReadFileText((dir_ / "target.json").string()), "text");
  fs::create_symlink("loop_b", dir_ / "loop_a");
  fs::create_symlink("loop_a", dir_ / "loop_b");
  EXPECT_THROW(WriteFileAtomically((dir_ / "loop_a").string(), "x"), InputError);
}

TEST_F(FileIoTest, RefusesDevicesFifosFoldersAndEmptyPaths) {
  EXPECT_THROW(WriteFileAtomically("/dev/full", "x"), InputError);
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(WriteFileAtomically(fifo.string(), "x"), InputError);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_THROW(WriteFileAtomically(dir_.string(), "x"), InputError);
  EXPECT_THROW(WriteFileAtomically("", "x"), InputError);
}

// A file in a folder its reader cannot enter: "cannot open", an InputError. Root enters any
// folder, so as root the read runs in a child that has dropped to user nobody.
TEST_F(FileIoTest, UnreadableFolderIsCannotOpen) {
  WriteFileAtomically((dir_ / "g.json").string(), "{}");
  fs::permissions(dir_, fs::perms::none);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::geteuid() == 0 && ::setuid(65534) != 0) ::_exit(10);
    try {
      ReadFileText((dir_ / "g.json").string());
      ::_exit(11);  // read a file it should not
    } catch (const InputError& e) {
      ::_exit(std::string(e.what()).find("cannot open") != std::string::npos ? 0 : 12);
    } catch (...) {
      ::_exit(13);  // any other exception is the bug
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}


TEST_F(FileIoTest, NeverFollowsALinkPlantedAtATemporaryName) {
  const fs::path victim = dir_ / "victim.txt";
  WriteFileAtomically(victim.string(), "precious");
  const fs::path out = dir_ / "out.json";
  // The name every earlier version used for its temporary file.
  fs::create_symlink(victim, dir_ / ("out.json.tmp." + std::to_string(::getpid())));
  WriteFileAtomically(out.string(), "result");
  EXPECT_EQ(ReadFileText(victim.string()), "precious");
  EXPECT_EQ(ReadFileText(out.string()), "result");
  struct stat info {};
  ASSERT_EQ(::stat(out.c_str(), &info), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);  // not mkstemp's 0600
}

TEST_F(FileIoTest, RefusesDevicesAsInputsButReadsPipes) {
  for (const char* device : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    try {
      ReadFileText(device);
      ADD_FAILURE() << device << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("character device"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(device), std::string::npos) << e.what();
    }
  }
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << "through a pipe"; });
  EXPECT_EQ(ReadFileText(fifo.string()), "through a pipe");
  writer.join();
}

TEST_F(FileIoTest, ChecksTheOutputFolderBeforeAnyWork) {
  EXPECT_NO_THROW(CheckWritable((dir_ / "new.json").string()));
  try {
    CheckWritable((dir_ / "missing" / "out.json").string());
    ADD_FAILURE() << "a missing folder passed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "missing" / "out.json").string()),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(CheckWritable(dir_.string()), InputError);
  EXPECT_THROW(CheckWritable("/dev/full"), InputError);
  // A read-only folder, as user nobody (root writes anywhere).
  fs::create_directories(dir_ / "locked");
  fs::permissions(dir_ / "locked", fs::perms::owner_read | fs::perms::owner_exec |
                                       fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir_, fs::perms::all);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::geteuid() == 0 && ::setuid(65534) != 0) ::_exit(10);
    try {
      CheckWritable((dir_ / "locked" / "out.json").string());
      ::_exit(11);
    } catch (const InputError& e) {
      ::_exit(std::string(e.what()).find("locked/out.json") != std::string::npos ? 0 : 12);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  fs::permissions(dir_ / "locked", fs::perms::owner_all);
}

TEST_F(FileIoTest, ScratchFoldersAreNewAndPrivate) {
  const fs::path a = MakeScratchFolder(dir_.string());
  const fs::path b = MakeScratchFolder(dir_.string());
  EXPECT_NE(a, b);
  EXPECT_EQ(a.parent_path(), dir_);
  EXPECT_EQ(fs::status(a).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_THROW(MakeScratchFolder((dir_ / "missing").string()), InputError);
}

}  // namespace
}  // namespace remat
