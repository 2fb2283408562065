// Cooperative cancellation and deadlines of long planning calls: the one mechanism through
// which every strategy, baseline, bound and search keeps its caller's time limit.
//
// A caller that must be able to stop a call early (the Python binding on Ctrl-C) installs a
// flag on the thread that runs the call; a caller with a time limit opens a DeadlineScope.
// Loops that can stop with what they have read DeadlinePassed() (or SecondsLeft()) between
// steps; code that cannot (one schedule's construction and simulation, which a strategy needs
// whole) calls StopAtDeadline() every few thousand steps, which abandons the work in hand by
// throwing TimeLimitReached to the scope's owner (a strategy run, a bound), which answers with
// the best it had before. Flag and deadline are per thread: cancelling or timing out one call
// never cuts another thread's call short.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>

namespace remat {

// Makes `flag` the calling thread's cancellation flag while the scope lives (scopes nest; the
// previous flag comes back at the end). The flag must outlive the scope.
class CancellationScope {
 public:
  explicit CancellationScope(const std::atomic<bool>& flag);
  ~CancellationScope();
  CancellationScope(const CancellationScope&) = delete;
  CancellationScope& operator=(const CancellationScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

// True once the flag of the calling thread's innermost scope is set; false without a scope
// (the command line, where a signal ends the whole process).
bool CancelRequested();

// While the scope lives, DeadlinePassed() is true once `seconds` have passed (nested scopes
// keep the earlier deadline; a limit beyond a century is none). Inside a stoppable scope
// StopAtDeadline() throws once the deadline has passed; a scope that is not stoppable (a
// command's whole work, whose report must still be written) only lowers the deadline of the
// scopes it holds. Stoppability is the innermost scope's.
class DeadlineScope {
 public:
  explicit DeadlineScope(double seconds, bool stoppable = true);
  ~DeadlineScope();
  DeadlineScope(const DeadlineScope&) = delete;
  DeadlineScope& operator=(const DeadlineScope&) = delete;

 private:
  std::chrono::steady_clock::time_point previous_;
  bool previous_stoppable_;
};

// True once the calling thread's innermost deadline has passed, or its call is cancelled.
bool DeadlinePassed();

// Seconds until the calling thread's innermost deadline: infinity without one, 0 once passed
// or cancelled.
double SecondsLeft();

// Work abandoned at its deadline (StopAtDeadline); never escapes the scope's owner.
class TimeLimitReached : public std::exception {
 public:
  const char* what() const noexcept override;
};

// Throws TimeLimitReached when DeadlinePassed() inside a stoppable scope; does nothing
// otherwise. Costs one clock read: call it every few thousand steps of a long loop.
void StopAtDeadline();

// StopAtDeadline() once per few thousand steps of a loop whose steps take nanoseconds.
class DeadlineCheck {
 public:
  void Step(int64_t steps = 1) {
    steps_ += steps;
    if (steps_ >= kStride) {
      steps_ = 0;
      StopAtDeadline();
    }
  }

 private:
  static constexpr int64_t kStride = 4096;
  int64_t steps_ = 0;
};

}  // namespace remat
