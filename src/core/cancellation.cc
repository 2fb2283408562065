// The calling thread's cancellation flag and deadline (cancellation.h).
#include "core/cancellation.h"

#include <algorithm>
#include <limits>

namespace remat {
namespace {

using Clock = std::chrono::steady_clock;

thread_local const std::atomic<bool>* current_flag = nullptr;
thread_local Clock::time_point current_deadline = Clock::time_point::max();
thread_local bool current_stoppable = false;

}  // namespace

CancellationScope::CancellationScope(const std::atomic<bool>& flag) : previous_(current_flag) {
  current_flag = &flag;
}

CancellationScope::~CancellationScope() { current_flag = previous_; }

bool CancelRequested() {
  return current_flag != nullptr && current_flag->load(std::memory_order_relaxed);
}

DeadlineScope::DeadlineScope(double seconds, bool stoppable)
    : previous_(current_deadline), previous_stoppable_(current_stoppable) {
  const auto now = Clock::now();
  const auto left = std::chrono::duration<double>(std::max(0.0, seconds));
  // Limits beyond a century are no limit (and would overflow the clock).
  if (left.count() < 3e9) {
    const auto end = now + std::chrono::duration_cast<Clock::duration>(left);
    current_deadline = std::min(previous_, end);
  }
  current_stoppable = stoppable;
}

DeadlineScope::~DeadlineScope() {
  current_deadline = previous_;
  current_stoppable = previous_stoppable_;
}

bool DeadlinePassed() { return CancelRequested() || Clock::now() >= current_deadline; }

double SecondsLeft() {
  if (CancelRequested()) return 0;
  if (current_deadline == Clock::time_point::max()) {
    return std::numeric_limits<double>::infinity();
  }
  return std::max(0.0, std::chrono::duration<double>(current_deadline - Clock::now()).count());
}

const char* TimeLimitReached::what() const noexcept {
  return "the time limit was reached before the work was done";
}

void StopAtDeadline() {
  if (current_stoppable && DeadlinePassed()) throw TimeLimitReached();
}

}  // namespace remat
