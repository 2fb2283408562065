// File I/O (issue 14, defects 2 and 5): outputs replace only regular files (following
// symlinks), devices, FIFOs and empty paths are refused, and an unreadable folder is a clear
// "cannot open", never a filesystem exception.
#include "core/file_io.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

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

}  // namespace
}  // namespace remat
