// Running gnuplot on a generated script, with the script and data kept beside the image.
#include "cli/gnuplot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/errors.h"
#include "core/file_io.h"

namespace remat {
namespace {

namespace fs = std::filesystem;

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool IsExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// The last `max_lines` lines of `text`, for error messages.
std::string Tail(const std::string& text, size_t max_lines) {
  size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  const size_t end = pos;
  size_t lines = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++lines == max_lines) break;
    --pos;
  }
  return text.substr(pos, end - pos);
}

struct ProcessResult {
  int exit_status = -1;  // -1 when killed by a signal
  std::string output;    // stdout and stderr together
};

// Runs `argv` (argv[0] is the executable's path) in `folder` and collects its output.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& folder) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) {
    throw InputError(fmt::format("cannot start gnuplot: pipe: {}", std::strerror(errno)));
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string reason = std::strerror(errno);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw InputError(fmt::format("cannot start gnuplot: fork: {}", reason));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::close(pipe_fds[0]);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    if (::chdir(folder.c_str()) != 0) ::_exit(126);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  ProcessResult result;
  char buffer[4096];
  while (true) {
    const ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (got > 0) {
      result.output.append(buffer, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string Terminal(ImageFormat format, int32_t width_px, int32_t height_px) {
  if (format == ImageFormat::kSvg) {
    return fmt::format("set terminal svg size {},{} font 'Helvetica,12' background rgb 'white'",
                       width_px, height_px);
  }
  return fmt::format("set terminal pngcairo size {},{} font 'Helvetica,10' background rgb 'white'",
                     width_px, height_px);
}

}  // namespace

ImageFormat ImageFormatOf(const std::string& image_path) {
  const std::string extension = Lower(fs::path(image_path).extension().string());
  if (extension == ".svg") return ImageFormat::kSvg;
  if (extension == ".png") return ImageFormat::kPng;
  throw UsageError(fmt::format("{}: a plot is written as .svg or .png; give one of those "
                               "extensions",
                               image_path));
}

PlotFiles PlotFilesFor(const std::string& image_path) {
  fs::path stem = fs::path(image_path);
  return {image_path, fs::path(stem).replace_extension(".dat").string(),
          fs::path(stem).replace_extension(".gp").string()};
}

std::string FindGnuplot() {
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env != nullptr ? path_env : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string folder = end > start ? path.substr(start, end - start) : ".";
    const std::string candidate = folder + "/gnuplot";
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  throw InputError(
      "plots need gnuplot, which is not on PATH: install it (Debian: apt-get install "
      "gnuplot-nox, or scripts/install-deps.sh) or leave out the plot option");
}

ByteUnit ByteUnitFor(int64_t max_bytes) {
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double bytes = 1;
  int unit = 0;
  while (unit < 4 && static_cast<double>(max_bytes) >= bytes * 1024) {
    bytes *= 1024;
    ++unit;
  }
  return {kNames[unit], bytes};
}

std::string GnuplotQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') quoted += "''";
    else if (c == '\n' || c == '\r') quoted += ' ';
    else quoted += c;
  }
  return quoted + "'";
}

void RenderPlot(const PlotSpec& spec) {
  const ImageFormat format = ImageFormatOf(spec.image_path);
  const std::string gnuplot = FindGnuplot();
  const PlotFiles files = PlotFilesFor(spec.image_path);
  const fs::path image_path(files.image);
  const fs::path folder = image_path.has_parent_path() ? image_path.parent_path() : fs::path(".");
  if (!fs::is_directory(folder)) {
    throw InputError(fmt::format("{}: the folder {} does not exist", files.image, folder.string()));
  }
  auto name = [](const std::string& path) { return fs::path(path).filename().string(); };
  // The script names its files relative to its folder and lets the caller override them, so
  // `gnuplot OUT.gp` in that folder re-draws OUT.svg from OUT.dat.
  const std::string script = fmt::format(
      "# {}\n"
      "# Re-plot in this folder with: gnuplot {}\n"
      "if (!exists(\"outfile\")) outfile = {}\n"
      "if (!exists(\"datafile\")) datafile = {}\n"
      "{}\n"
      "set termoption noenhanced\n"
      "set output outfile\n"
      "{}\n"
      "unset output\n",
      spec.title, name(files.script), GnuplotQuote(name(files.image)),
      GnuplotQuote(name(files.data)), Terminal(format, spec.width_px, spec.height_px),
      spec.commands);
  const std::string data = fmt::format("# {}\n{}", spec.title, spec.data);

  // Everything is drawn in a private folder beside the outputs (no predictable name a link
  // could be planted at), then renamed into place.
  const fs::path scratch = MakeScratchFolder(folder.string());
  auto cleanup = [&] {
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
  };
  const fs::path temp_image = scratch / name(files.image);
  const fs::path temp_data = scratch / name(files.data);
  try {
    WriteFileAtomically(temp_data.string(), data);
    WriteFileAtomically((scratch / name(files.script)).string(), script);
  } catch (...) {
    cleanup();
    throw;
  }
  const ProcessResult run = RunProcess({gnuplot, name(files.script)}, scratch.string());
  std::error_code size_error;
  const auto image_size = fs::file_size(temp_image, size_error);
  if (run.exit_status != 0 || size_error || image_size == 0) {
    cleanup();
    const std::string what = run.exit_status == 127   ? "could not be started"
                             : run.exit_status == 126  ? "could not enter the output folder"
                             : run.exit_status != 0    ? fmt::format("failed (exit {})",
                                                                     run.exit_status)
                                                       : "wrote no image";
    throw InputError(fmt::format("{}: gnuplot {}{}{}", files.image, what,
                                 run.output.empty() ? "" : ":\n", Tail(run.output, 8)));
  }
  std::error_code error;
  fs::rename(temp_data, files.data, error);
  if (!error) fs::rename(scratch / name(files.script), files.script, error);
  if (!error) fs::rename(temp_image, files.image, error);
  cleanup();
  if (error) throw InputError(fmt::format("{}: cannot write: {}", files.image, error.message()));
}

}  // namespace remat
