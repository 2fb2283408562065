// A progress line on stderr for commands that run many solves: what is being solved,
// done/total, elapsed time and an estimate of the time left. It rewrites itself in place and
// prints nothing when disabled (stderr is not a terminal, or --quiet).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "planning/work_progress.h"

namespace remat {

// True when progress should be shown: not `quiet` and stderr is a terminal.
bool ProgressWanted(bool quiet);

// "0.4 s", "12.3 s", "4m 05s", "2h 03m".
std::string FormatDuration(double seconds);

// One progress line, e.g. "[sweep] 3/40  optimal at 1.20 MiB  elapsed 12.3 s  ETA 2m 44s".
// The ETA assumes the remaining items take as long as the finished ones on average; it is
// "?" before the first item finishes and omitted when `total` is unknown (zero).
std::string FormatProgressLine(const std::string& label, const std::string& what, int64_t done,
                               int64_t total, double elapsed_s);

class ProgressLine {
 public:
  ProgressLine(std::string label, int64_t total, bool enabled);
  ~ProgressLine();  // ends the line so that later output starts on a fresh one
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Shows that work on `what` is starting; the count shown is of finished items.
  void Start(const std::string& what);
  // One more item is finished.
  void Finish();
  // The total can change when the amount of work is found while working (a search).
  void SetTotal(int64_t total) { total_ = total; }
  int64_t done() const { return done_; }
  double ElapsedSeconds() const;
  // Hooks for planning's long work that draw on this line (valid while the line lives).
  WorkProgress Hooks() {
    return {.start = [this](const std::string& what) { Start(what); },
            .finish = [this] { Finish(); }};
  }

 private:
  void Draw();

  std::string label_;
  int64_t total_ = 0;
  int64_t done_ = 0;
  bool enabled_ = false;
  bool drawn_ = false;
  std::string what_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace remat
