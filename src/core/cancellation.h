// Cooperative cancellation of long planning calls. A caller that must be able to stop a call
// early (the Python binding on Ctrl-C) installs a flag on the thread that runs the call; every
// loop that consults a time limit also consults CancelRequested(), so the call ends as it would
// at its time limit, within a fraction of a second, and the caller discards what it returns.
// The flag is per thread: cancelling one call never cuts another thread's call short.
#pragma once

#include <atomic>
#include <chrono>

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

// A time limit for work whose interface takes none (the baselines' sweeps over segment sizes
// and slot counts): while the scope lives, DeadlinePassed() is true once `seconds` have passed
// (nested scopes keep the earlier deadline). Such loops stop there with the best they have.
class DeadlineScope {
 public:
  explicit DeadlineScope(double seconds);
  ~DeadlineScope();
  DeadlineScope(const DeadlineScope&) = delete;
  DeadlineScope& operator=(const DeadlineScope&) = delete;

 private:
  std::chrono::steady_clock::time_point previous_;
};

// True once the calling thread's innermost deadline has passed, or its call is cancelled.
bool DeadlinePassed();

}  // namespace remat
