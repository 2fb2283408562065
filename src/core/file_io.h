// Whole-file reads and atomic writes: an output file is either complete or absent.
#pragma once

#include <string>

namespace remat {

// Reads a file into a string; a missing or unreadable file is an InputError naming it.
std::string ReadFileText(const std::string& path);

// Writes `text` to `path` through a temporary file in the same folder and a rename, so a
// reader never sees a partial file. A symlink is followed (its target is replaced, the link
// stays); an empty path, or a path that is a directory, device, FIFO or socket, is refused.
// Throws InputError naming the path when the folder is not writable or the write fails.
void WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace remat
