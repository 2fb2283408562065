// Printing memory sizes for people.
#include "core/sizes.h"

#include <fmt/format.h>

namespace remat {

std::string FormatBytes(int64_t bytes) {
  static const char* kNames[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, kNames[unit]);
}

}  // namespace remat
