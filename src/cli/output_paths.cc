// Output options checked before the work.
#include "cli/output_paths.h"

#include <filesystem>

#include <fmt/format.h>

#include "cli/gnuplot.h"
#include "core/errors.h"
#include "core/file_io.h"

namespace remat {

void CheckOutputPath(const std::string& option, const std::string& path,
                     const std::vector<std::string>& inputs) {
  if (path.empty()) return;
  for (const std::string& input : inputs) {
    std::error_code error;  // a missing file is simply not the same file
    if (!input.empty() && std::filesystem::equivalent(path, input, error)) {
      throw UsageError(fmt::format("{} {} would overwrite the input file {}: choose another output",
                                   option, path, input));
    }
  }
  CheckWritable(path);
}

void CheckPlotPath(const std::string& option, const std::string& image_path,
                   const std::vector<std::string>& inputs) {
  if (image_path.empty()) return;
  ImageFormatOf(image_path);
  const PlotFiles files = PlotFilesFor(image_path);
  for (const std::string& path : {files.image, files.data, files.script}) {
    CheckOutputPath(option, path, inputs);
  }
}

}  // namespace remat
