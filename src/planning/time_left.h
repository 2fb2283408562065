// Seconds left of a total time limit shared by several runs: Python's time_limit_s of a plan,
// the evaluation verbs' --total-time-limit.
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>

namespace remat {

// Counted from construction; unlimited (infinity left) when the total is not positive.
class TimeLeft {
 public:
  explicit TimeLeft(double total_s) : total_s_(total_s) {}
  double Left() const {
    if (total_s_ <= 0) return std::numeric_limits<double>::infinity();
    return total_s_ -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
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
