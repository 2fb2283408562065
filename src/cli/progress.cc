// The progress line of long commands (STYLE.md: progress on stderr, quiet off a terminal).
#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace remat {

bool ProgressWanted(bool quiet) { return !quiet && ::isatty(STDERR_FILENO) == 1; }

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const int64_t whole = static_cast<int64_t>(std::llround(seconds));
  if (whole < 3600) return fmt::format("{}m {:02}s", whole / 60, whole % 60);
  return fmt::format("{}h {:02}m", whole / 3600, (whole % 3600) / 60);
}

std::string FormatProgressLine(const std::string& label, const std::string& what, int64_t done,
                               int64_t total, double elapsed_s) {
  std::string line = fmt::format("[{}] ", label);
  line += total > 0 ? fmt::format("{}/{}", done, total) : fmt::format("{} done", done);
  if (!what.empty()) line += "  " + what;
  line += "  elapsed " + FormatDuration(elapsed_s);
  if (total > 0) {
    const double eta = done > 0 ? elapsed_s / static_cast<double>(done) *
                                      static_cast<double>(std::max<int64_t>(0, total - done))
                                : -1;
    line += "  ETA " + FormatDuration(eta);
  }
  return line;
}

ProgressLine::ProgressLine(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  if (enabled_ && drawn_) {
    std::fputs("\n", stderr);
    std::fflush(stderr);
  }
}

double ProgressLine::ElapsedSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::Start(const std::string& what) {
  what_ = what;
  Draw();
}

void ProgressLine::Finish() {
  ++done_;
  Draw();
}

void ProgressLine::Draw() {
  if (!enabled_) return;
  // "\r" returns to the start of the line, ESC[K clears what a longer line left behind.
  fmt::print(stderr, "\r{}\x1b[K", FormatProgressLine(label_, what_, done_, total_,
                                                      ElapsedSeconds()));
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace remat
