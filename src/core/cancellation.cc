// The calling thread's cancellation flag (cancellation.h).
#include "core/cancellation.h"

#include <algorithm>

namespace remat {
namespace {

thread_local const std::atomic<bool>* current_flag = nullptr;
thread_local std::chrono::steady_clock::time_point current_deadline =
    std::chrono::steady_clock::time_point::max();

}  // namespace

CancellationScope::CancellationScope(const std::atomic<bool>& flag) : previous_(current_flag) {
  current_flag = &flag;
}

CancellationScope::~CancellationScope() { current_flag = previous_; }

bool CancelRequested() {
  return current_flag != nullptr && current_flag->load(std::memory_order_relaxed);
}

DeadlineScope::DeadlineScope(double seconds) : previous_(current_deadline) {
  const auto now = std::chrono::steady_clock::now();
  const auto left = std::chrono::duration<double>(std::max(0.0, seconds));
  // Limits beyond a century are no limit (and would overflow the clock).
  if (left.count() < 3e9) {
    const auto end = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
    current_deadline = std::min(previous_, end);
  }
}

DeadlineScope::~DeadlineScope() { current_deadline = previous_; }

bool DeadlinePassed() {
  return CancelRequested() || std::chrono::steady_clock::now() >= current_deadline;
}

}  // namespace remat
