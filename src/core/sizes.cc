// Printing memory sizes for people.
#include "core/sizes.h"

#include <fmt/format.h>

namespace remat {

std::string FormatBytes(int64_t bytes) { return FormatBytesWithDecimals(bytes, 2); }

std::string FormatBytesWithDecimals(int64_t bytes, int decimals) {
  static const char* kNames[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.{}f} {}", value, decimals, kNames[unit]);
}

std::string FormatBytesDifference(int64_t bytes) {
  return (bytes < 0 ? "-" : "+") + FormatBytes(bytes < 0 ? -bytes : bytes);
}

std::pair<std::string, std::string> FormatBytesApart(int64_t a, int64_t b) {
  // 13 decimals resolve one byte in a TiB; sizes that still read alike fall back to bytes.
  for (int decimals = 2; decimals <= 13; ++decimals) {
    std::pair<std::string, std::string> texts{FormatBytesWithDecimals(a, decimals),
                                                 FormatBytesWithDecimals(b, decimals)};
    if (a == b || texts.first != texts.second) return texts;
  }
  return {fmt::format("{} B", a), fmt::format("{} B", b)};
}

}  // namespace remat
