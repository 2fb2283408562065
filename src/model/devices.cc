// The device presets: vendor datasheet figures (docs/zoo.md lists the sources).
#include "model/devices.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"

namespace remat {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

}  // namespace

const std::vector<DeviceSpec>& DevicePresets() {
  static const std::vector<DeviceSpec> presets = {
      {.name = "v100-16gb",
       .description = "NVIDIA V100 SXM2 16 GB (HBM2)",
       .memory_bytes = 16 * kGiB,
       .peak_flops_per_s = 15.7e12,
       .bandwidth_bytes_per_s = 900e9},
      {.name = "a100-40gb",
       .description = "NVIDIA A100 SXM4 40 GB (HBM2)",
       .memory_bytes = 40 * kGiB,
       .peak_flops_per_s = 19.5e12,
       .bandwidth_bytes_per_s = 1555e9},
      {.name = "a100-80gb",
       .description = "NVIDIA A100 SXM4 80 GB (HBM2e)",
       .memory_bytes = 80 * kGiB,
       .peak_flops_per_s = 19.5e12,
       .bandwidth_bytes_per_s = 2039e9},
      {.name = "h100-80gb",
       .description = "NVIDIA H100 SXM5 80 GB (HBM3)",
       .memory_bytes = 80 * kGiB,
       .peak_flops_per_s = 67e12,
       .bandwidth_bytes_per_s = 3.35e12},
      {.name = "h200-141gb",
       .description = "NVIDIA H200 SXM 141 GB (HBM3e)",
       .memory_bytes = 141 * kGiB,
       .peak_flops_per_s = 67e12,
       .bandwidth_bytes_per_s = 4.8e12},
  };
  return presets;
}

const DeviceSpec* FindDevice(const std::string& name) {
  for (const DeviceSpec& device : DevicePresets()) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

const DeviceSpec& DeviceByName(const std::string& name) {
  if (const DeviceSpec* device = FindDevice(name)) return *device;
  std::vector<std::string> names;
  for (const DeviceSpec& device : DevicePresets()) names.push_back(device.name);
  throw InputError(
      fmt::format("unknown device '{}'; known devices: {}", name, fmt::join(names, ", ")));
}

}  // namespace remat
