// Entries of remat's on-disk caches (remat-run's measured workspace): kept in a folder remat
// owns, read without following links, written whole or not at all. A cache only saves time:
// whatever is wrong with it (a link, a foreign or shared folder, a truncated or garbage entry)
// makes remat measure again and say so, never an error blamed on the user's input.
#pragma once

#include <optional>
#include <string>

namespace remat {

// `folder`, created (mode 0700) when missing, when it is usable for a cache: a real folder,
// not a link, owned by this user and writable by nobody else. Otherwise nullopt, with `why`
// saying what is wrong, naming the folder.
std::optional<std::string> OwnedCacheFolder(const std::string& folder, std::string& why);

// The entry's text; nullopt when there is none (no file: `why` stays empty) or when it is not
// a regular file of this user's (a link, a folder, a device: `why` says which, naming it). A
// link is never followed.
std::optional<std::string> ReadCacheEntry(const std::string& path, std::string& why);

// Writes `text` at `path` (readable by its owner only) through an exclusively created
// temporary file and a rename, which replaces a link at `path` itself, never its target.
// Throws InputError naming the path when the write fails.
void WriteCacheEntry(const std::string& path, const std::string& text);

}  // namespace remat
