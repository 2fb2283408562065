// remat's cache folders and entries (cache_entries.h).
#include "cli/cache_entries.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/file_io.h"

namespace remat {

std::optional<std::string> OwnedCacheFolder(const std::string& folder, std::string& why) {
  std::error_code error;
  std::filesystem::create_directories(std::filesystem::path(folder).parent_path(), error);
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    why = fmt::format("cannot create the cache folder {}: {}", folder, std::strerror(errno));
    return std::nullopt;
  }
  struct stat info {};
  if (::lstat(folder.c_str(), &info) != 0) {
    why = fmt::format("cannot read the cache folder {}: {}", folder, std::strerror(errno));
    return std::nullopt;
  }
  if (S_ISLNK(info.st_mode) || !S_ISDIR(info.st_mode)) {
    why = fmt::format("the cache folder {} is {}", folder,
                      S_ISLNK(info.st_mode) ? "a link" : "not a folder");
    return std::nullopt;
  }
  if (info.st_uid != ::geteuid()) {
    why = fmt::format("the cache folder {} belongs to another user", folder);
    return std::nullopt;
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why = fmt::format("the cache folder {} is writable by other users", folder);
    return std::nullopt;
  }
  return folder;
}

std::optional<std::string> ReadCacheEntry(const std::string& path, std::string& why) {
  why.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    why = errno == ELOOP ? fmt::format("the cache entry {} is a link", path)
                         : fmt::format("cannot read the cache entry {}: {}", path,
                                       std::strerror(errno));
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) {
    ::close(fd);
    why = fmt::format("the cache entry {} is not a file of this user's", path);
    return std::nullopt;
  }
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      why = fmt::format("cannot read the cache entry {}: {}", path, std::strerror(errno));
      ::close(fd);
      return std::nullopt;
    }
    if (got == 0) break;
    text.append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

void WriteCacheEntry(const std::string& path, const std::string& text) {
  WriteFileAtomically(path, text, {.follow_links = false, .owner_only = true});
}

}  // namespace remat
