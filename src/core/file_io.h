// Whole-file reads and atomic writes: an output file is either complete or absent.
#pragma once

#include <string>

namespace remat {

// Reads a file into a string; a missing or unreadable file is an InputError naming it.
std::string ReadFileText(const std::string& path);

// Writes `text` to `path` through a temporary file in the same folder and a rename, so a
// reader never sees a partial file. Throws InputError when the folder is not writable.
void WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace remat
