// Output options checked before a command's work starts, so that a long solve never ends in
// "cannot write" and an output never silently replaces one of the command's inputs.
#pragma once

#include <string>
#include <vector>

namespace remat {

// Does nothing for an empty path (the option was not given). A path that names one of
// `inputs` (the same file, through any link) is a UsageError naming `option`; a path that
// cannot be written (missing or read-only folder, a folder, a device) is an InputError naming
// the path as the user gave it.
void CheckOutputPath(const std::string& option, const std::string& path,
                     const std::vector<std::string>& inputs);

// The same for a plot: its image format, and the image with the .dat and .gp beside it.
void CheckPlotPath(const std::string& option, const std::string& image_path,
                   const std::vector<std::string>& inputs);

}  // namespace remat
