// Whole-file reads and atomic writes.
#include "core/file_io.h"

#include <cerrno>
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
  if (std::filesystem::is_directory(path)) {
    throw InputError(fmt::format("{}: is a directory, not a file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("{}: read error", path));
  return text.str();
}

void WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    }
    out << text;
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw InputError(fmt::format("{}: write failed", path));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp.c_str());
    throw InputError(fmt::format("{}: cannot write: {}", path, reason));
  }
}

}  // namespace remat
