// remat's cache folders and entries (src/cli/cache_entries.cc): a folder remat owns, entries
// read without following links and written whole, so that nothing found in a cache can
// redirect a write or pass for the user's input.
#include "cli/cache_entries.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"

namespace remat {
namespace {

namespace fs = std::filesystem;

class CacheEntriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("remat-cache-entries-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  static std::string Text(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  fs::path root_;
};

TEST_F(CacheEntriesTest, AMissingFolderIsCreatedPrivate) {
  std::string why;
  const std::string folder = (root_ / "a" / "workspace").string();
  ASSERT_EQ(OwnedCacheFolder(folder, why), folder) << why;
  struct stat info {};
  ASSERT_EQ(::lstat(folder.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
}

TEST_F(CacheEntriesTest, AFolderWritableByOthersOrALinkIsNotUsed) {
  std::string why;
  const fs::path shared = root_ / "shared";
  fs::create_directory(shared);
  ::chmod(shared.c_str(), 0777);
  EXPECT_FALSE(OwnedCacheFolder(shared.string(), why));
  EXPECT_NE(why.find("writable by other users"), std::string::npos) << why;
  const fs::path real = root_ / "real", link = root_ / "link";
  fs::create_directory(real);
  ::chmod(real.c_str(), 0700);
  fs::create_directory_symlink(real, link);
  EXPECT_FALSE(OwnedCacheFolder(link.string(), why));
  EXPECT_NE(why.find("a link"), std::string::npos) << why;
  EXPECT_NE(why.find(link.string()), std::string::npos) << why;
}

TEST_F(CacheEntriesTest, NoEntryIsNoTextAndNoReason) {
  std::string why = "stale";
  EXPECT_FALSE(ReadCacheEntry((root_ / "none.json").string(), why));
  EXPECT_EQ(why, "");
}

TEST_F(CacheEntriesTest, AnEntryIsWrittenWholeAndReadBack) {
  const std::string path = (root_ / "entry.json").string();
  WriteCacheEntry(path, "{\"a\": 1}");
  std::string why;
  EXPECT_EQ(ReadCacheEntry(path, why), "{\"a\": 1}");
  struct stat info {};
  ASSERT_EQ(::lstat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  // No temporary file is left beside it.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(root_)) ++files;
  EXPECT_EQ(files, 1);
}

// A link at an entry's path, dangling or not, is never read through, and writing the entry
// replaces the link itself: the link's target is neither created nor changed.
TEST_F(CacheEntriesTest, ALinkAtAnEntryIsNeitherReadNorWrittenThrough) {
  const fs::path entry = root_ / "entry.json", target = root_ / "elsewhere.json";
  fs::create_symlink(target, entry);  // dangling
  std::string why;
  EXPECT_FALSE(ReadCacheEntry(entry.string(), why));
  EXPECT_NE(why.find("is a link"), std::string::npos) << why;
  WriteCacheEntry(entry.string(), "measured");
  EXPECT_FALSE(fs::exists(target));
  EXPECT_FALSE(fs::is_symlink(entry));
  EXPECT_EQ(Text(entry), "measured");
  // A link to an existing file: its target keeps its text.
  { std::ofstream(target) << "the user's file"; }
  fs::remove(entry);
  fs::create_symlink(target, entry);
  EXPECT_FALSE(ReadCacheEntry(entry.string(), why));
  WriteCacheEntry(entry.string(), "measured");
  EXPECT_EQ(Text(target), "the user's file");
  EXPECT_EQ(Text(entry), "measured");
}

TEST_F(CacheEntriesTest, AFolderAtAnEntryIsNotAFile) {
  const fs::path entry = root_ / "entry.json";
  fs::create_directory(entry);
  std::string why;
  EXPECT_FALSE(ReadCacheEntry(entry.string(), why));
  EXPECT_NE(why, "");
}

}  // namespace
}  // namespace remat
