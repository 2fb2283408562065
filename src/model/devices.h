// Accelerator presets: memory capacity for budgets, peak FLOP/s and bandwidth for the roofline
// cost model (values and sources in docs/zoo.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

struct DeviceSpec {
  std::string name;                  // e.g. "a100-40gb"
  std::string description;           // the product, e.g. "NVIDIA A100 SXM4 40 GB (HBM2)"
  int64_t memory_bytes = 0;          // nominal capacity, GB read as GiB (docs/zoo.md)
  double peak_flops_per_s = 0;       // dense FP32 peak without tensor cores
  double bandwidth_bytes_per_s = 0;  // peak memory bandwidth
};

// In increasing capacity: v100-16gb, a100-40gb, a100-80gb, h100-80gb, h200-141gb.
const std::vector<DeviceSpec>& DevicePresets();
// nullptr when no preset has that name.
const DeviceSpec* FindDevice(const std::string& name);
// The preset with that name; InputError listing the known names otherwise.
const DeviceSpec& DeviceByName(const std::string& name);

}  // namespace remat
