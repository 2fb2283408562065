// Seconds left of a total time limit shared by several runs: Python's time_limit_s of a plan,
// the evaluation verbs' --total-time-limit. Never more than the calling thread's deadline
// leaves (core/cancellation.h): a command's limit holds for everything it runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/cancellation.h"

namespace remat {

class TimeLeft {
 public:
  explicit TimeLeft(double total_s) : total_s_(total_s) {}
  // Counted from construction; unlimited (only the thread's deadline) when the total is not
  // positive.
  double Left() const {
    if (total_s_ <= 0) return SecondsLeft();
    return std::min(SecondsLeft(), total_s_ - Elapsed());
  }
  bool Spent() const { return Left() <= 0; }
  // Seconds since construction.
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }
  // A run's limit: `limit_s`, at most `share` of what is left (never below a millisecond,
  // the smallest limit a solver takes).
  double Cap(double limit_s, double share) const {
    return std::max(1e-3, std::min(limit_s, share * Left()));
  }

 private:
  double total_s_;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now();
};

}  // namespace remat
