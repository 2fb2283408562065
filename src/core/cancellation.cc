// The calling thread's cancellation flag (cancellation.h).
#include "core/cancellation.h"

namespace remat {
namespace {

thread_local const std::atomic<bool>* current_flag = nullptr;

}  // namespace

CancellationScope::CancellationScope(const std::atomic<bool>& flag) : previous_(current_flag) {
  current_flag = &flag;
}

CancellationScope::~CancellationScope() { current_flag = previous_; }

bool CancelRequested() {
  return current_flag != nullptr && current_flag->load(std::memory_order_relaxed);
}

}  // namespace remat
