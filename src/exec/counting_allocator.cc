// The counting allocator: c10's aligned CPU allocation with every block's size recorded, so
// the matching free subtracts exactly what was added. The DataPtr context is the data pointer
// itself (oneDNN's raw_allocate requires it), so sizes are kept in a table.
#include "exec/counting_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <mutex>
#include <unordered_map>

namespace remat::exec {
namespace {

CountingAllocator* g_counter = nullptr;
std::mutex g_mutex;
std::unordered_map<void*, int64_t>* g_sizes = nullptr;

void Release(void* data) {
  if (data == nullptr) return;
  int64_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_sizes->find(data);
    if (it != g_sizes->end()) {
      bytes = it->second;
      g_sizes->erase(it);
    }
  }
  g_counter->Add(-bytes);
  c10::free_cpu(data);
}

class CountingC10Allocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    void* data = c10::alloc_cpu(n);
    if (data != nullptr) {
      std::lock_guard<std::mutex> lock(g_mutex);
      (*g_sizes)[data] = static_cast<int64_t>(n);
    }
    g_counter->Add(static_cast<int64_t>(n));
    return {data, data, &Release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &Release; }
};

}  // namespace

void CountingAllocator::Add(int64_t bytes) {
  const int64_t live = live_bytes_.fetch_add(bytes) + bytes;
  int64_t peak = peak_bytes_.load();
  while (live > peak && !peak_bytes_.compare_exchange_weak(peak, live)) {
  }
}

CountingAllocator& CountingAllocator::Install() {
  static CountingAllocator counter;
  static std::once_flag once;
  std::call_once(once, [] {
    g_counter = &counter;
    g_sizes = new std::unordered_map<void*, int64_t>();  // lives as long as any tensor
    static CountingC10Allocator allocator;
    // Priority 1 outranks the default registration (0).
    c10::SetAllocator(c10::DeviceType::CPU, &allocator, /*priority=*/1);
  });
  return counter;
}

}  // namespace remat::exec
