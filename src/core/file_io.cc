// Whole-file reads and atomic writes.
#include "core/file_io.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.h"
#include "core/quoted.h"

namespace remat {

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
std::string WriteTarget(const std::string& path, bool follow_links) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError("the output path is empty");
  // A name with a newline or an escape would break the messages and scripts that name it.
  if (std::any_of(path.begin(), path.end(),
                  [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    throw InputError(fmt::format("{}: the output name contains a control character; choose "
                                 "another name",
                                 Quoted(path)));
  }
  if (path.size() >= PATH_MAX) {
    throw InputError(fmt::format("the output path is {} characters long, over this system's "
                                 "limit of {}",
                                 path.size(), PATH_MAX - 1));
  }
  for (const fs::path& part : fs::path(path)) {
    if (part.native().size() > NAME_MAX) {
      throw InputError(fmt::format("{}: a name in the path is {} characters long, over this "
                                   "system's limit of {}",
                                   path, part.native().size(), NAME_MAX));
    }
  }
  std::error_code error;
  fs::path target = path;
  if (!follow_links) {
    // rename() replaces the directory entry at `path`: a link there is replaced, not followed.
    const fs::file_status own = fs::symlink_status(target, error);
    if (!error && fs::exists(own) && !fs::is_regular_file(own) && !fs::is_symlink(own)) {
      throw InputError(fmt::format("{}: is {}; remat writes only regular files", path,
                                   KindOf(own.type())));
    }
    return target.string();
  }
  // What the kernel reaches through every link, pseudo-links like /proc/self/fd/1 included
  // (a pipe there has no name to follow).
  const fs::file_status reached = fs::status(path, error);
  if (!error && fs::exists(reached) && !fs::is_regular_file(reached)) {
    throw InputError(fmt::format("{}: is {}; remat writes only regular files", path,
                                 KindOf(reached.type())));
  }
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

std::string ReadFileText(const std::string& path) {
  // The error_code form: a folder the user cannot enter must say "cannot open", not throw.
  // Devices and sockets are refused before opening: /dev/zero would fill memory and
  // /dev/urandom never ends. A FIFO stays readable, so `--graph /dev/stdin` reads a pipe.
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status)) {
    throw InputError(fmt::format("{}: is a directory, not a file", path));
  }
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_fifo(status)) {
    throw InputError(fmt::format("{}: is {}; remat reads regular files and pipes", path,
                                 KindOf(status.type())));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  // Read in chunks rather than `stream << in.rdbuf()`, which swallows an allocation failure
  // and returns the text read so far: out of memory must say so (exit 70), not "malformed".
  std::string text;
  std::array<char, 1 << 16> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(fmt::format("{}: read error", path));
  return text;
}

void CheckWritable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target = WriteTarget(path, /*follow_links=*/true);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw InputError(fs::exists(folder, error)
                         ? fmt::format("{}: cannot write: {} is a file, not a folder", path,
                                       folder.string())
                         : fmt::format("{}: cannot write: the folder {} does not exist", path,
                                       folder.string()));
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    throw InputError(fmt::format("{}: cannot write in the folder {}: {}", path, folder.string(),
                                 std::strerror(errno)));
  }
}

void WriteFileAtomically(const std::string& path, const std::string& text,
                         const AtomicWriteOptions& options) {
  const std::string target = WriteTarget(path, options.follow_links);
  // mkstemp opens a fresh, unpredictable name with O_EXCL, so a link planted beside the
  // output can never redirect the write.
  std::string temp = target + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  // mkstemp creates the file 0600; an output gets the usual 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  bool written = ::fchmod(fd, options.owner_only ? 0600 : 0666 & ~mask) == 0;
  for (size_t done = 0; written && done < text.size();) {
    const ssize_t count = ::write(fd, text.data() + done, text.size() - done);
    if (count < 0 && errno == EINTR) continue;
    written = count > 0;
    if (written) done += static_cast<size_t>(count);
  }
  std::string reason = written ? "" : std::strerror(errno);
  if (::close(fd) != 0 && written) {
    written = false;
    reason = std::strerror(errno);
  }
  if (!written) {
    std::remove(temp.c_str());
    throw InputError(fmt::format("{}: write failed: {}", path, reason));
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    throw InputError(fmt::format("{}: cannot write: {}", path, why));
  }
}

std::string MakeScratchFolder(const std::string& folder) {
  std::string name = (std::filesystem::path(folder) / ".remat.XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr) {
    throw InputError(fmt::format("{}: cannot create a scratch folder: {}", folder,
                                 std::strerror(errno)));
  }
  return name;
}

}  // namespace remat
