// Whole-file reads and atomic writes: an output file is either complete or absent.
#pragma once

#include <string>

namespace remat {

// Reads a file (or a pipe, such as /dev/stdin) into a string; a missing or unreadable file,
// a folder, a device or a socket is an InputError naming it.
std::string ReadFileText(const std::string& path);

struct AtomicWriteOptions {
  // A symlink at `path` is followed (its target is replaced, the link stays); false replaces
  // the link itself and never writes through it (remat's caches).
  bool follow_links = true;
  // Readable by its owner only (0600) instead of 0666 less the umask.
  bool owner_only = false;
};

// Writes `text` to `path` through a temporary file in the same folder and a rename, so a
// reader never sees a partial file. An empty path, or a path that is a directory, device,
// FIFO or socket, is refused. Throws InputError naming the path when the folder is not
// writable or the write fails. The temporary file is created exclusively (O_EXCL) under an
// unpredictable name.
void WriteFileAtomically(const std::string& path, const std::string& text,
                         const AtomicWriteOptions& options = {});

// Checks, before any work, that WriteFileAtomically(path, ...) can succeed: the path is not a
// folder, device or FIFO and its folder exists and is writable. InputError naming `path`.
void CheckWritable(const std::string& path);

// Creates a new folder, readable only by its owner, inside `folder` under an unpredictable
// name (mkdtemp) and returns its path; InputError naming `folder` when that fails.
std::string MakeScratchFolder(const std::string& folder);

}  // namespace remat
