// Whole-file reads and atomic writes.
#include "core/file_io.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <unistd.h>

#include "core/errors.h"

namespace remat {

std::string ReadFileText(const std::string& path) {
  // The error_code form: a folder the user cannot enter must say "cannot open", not throw.
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw InputError(fmt::format("{}: is a directory, not a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: read error", path));
  return text.str();
}

namespace {

const char* KindOf(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::directory: return "a directory";
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::fifo: return "a FIFO";
    case std::filesystem::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// The regular file a write to `path` should replace: `path` itself, or the file a symlink
// points to (followed, so the link stays a link). Anything else that exists is refused.
std::string WriteTarget(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("the output path is empty");
  std::error_code error;
  fs::path target = path;
  for (int32_t hops = 0; fs::is_symlink(fs::symlink_status(target, error)); ++hops) {
    const fs::path next = fs::read_symlink(target, error);
    if (error || hops == 40) {
      throw InputError(fmt::format("{}: cannot follow the symlink{}", path,
                                   error ? ": " + error.message() : " (a loop)"));
    }
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const fs::file_status status = fs::status(target, error);
  if (!error && fs::exists(status) && !fs::is_regular_file(status)) {
    throw InputError(fmt::format("{}: is {}; remat writes only regular files", path,
                                 KindOf(status.type())));
  }
  return target.string();
}

}  // namespace

void WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string target = WriteTarget(path);
  const std::string temp = fmt::format("{}.tmp.{}", target, ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    }
    out << text;
    out.flush();
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      throw InputError(fmt::format("{}: write failed", path));
    }
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp.c_str());
    throw InputError(fmt::format("{}: cannot write: {}", path, reason));
  }
}

}  // namespace remat
