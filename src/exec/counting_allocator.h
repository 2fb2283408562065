// A CPU allocator that counts live and peak bytes, installed through c10's allocator hook so
// that every ATen CPU tensor allocation passes through it.
#pragma once

#include <atomic>
#include <cstdint>

namespace remat::exec {

class CountingAllocator {
 public:
  // Installs the counter as c10's CPU allocator (once per process; later calls are no-ops)
  // and returns it. Allocations made before installation are never counted.
  static CountingAllocator& Install();

  int64_t live_bytes() const { return live_bytes_.load(); }
  int64_t peak_bytes() const { return peak_bytes_.load(); }
  // Starts a new peak measurement at the current live bytes.
  void ResetPeak() { peak_bytes_.store(live_bytes_.load()); }

  void Add(int64_t bytes);

 private:
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> peak_bytes_{0};
};

}  // namespace remat::exec
