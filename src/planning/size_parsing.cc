// Parsing memory sizes as people write them: bytes, units and percentages.
#include "planning/size_parsing.h"

#include <cctype>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace remat {

SizeSpec ParseSize(const std::string& text) {
  const std::string usage = fmt::format(
      "invalid size '{}': use bytes (1000000), a unit (512MB, 16GiB, 1.5GB; k/M/G/T are powers "
      "of 1000, Ki/Mi/Gi/Ti of 1024, a trailing B is optional) or a percentage (60%)",
      text);
  size_t consumed = 0;
  double value = 0;
  try {
    value = std::stod(text, &consumed);
  } catch (const std::exception&) {
    throw std::invalid_argument(usage);
  }
  if (!std::isfinite(value) || value < 0 || text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) {
    throw std::invalid_argument(usage);
  }
  std::string unit = text.substr(consumed);
  if (unit == "%") return {.percent = true, .value = value};
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1.0},      {"k", 1e3},     {"K", 1e3},        {"M", 1e6},
      {"G", 1e9},     {"T", 1e12},    {"Ki", 1024.0},    {"Mi", 1048576.0},
      {"Gi", 1073741824.0},           {"Ti", 1099511627776.0}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      const double bytes = std::floor(value * scale);
      if (bytes > 9.0e18) throw std::invalid_argument(usage);
      return {.percent = false, .value = bytes};
    }
  }
  throw std::invalid_argument(usage);
}

int64_t ResolveSize(const SizeSpec& spec, int64_t reference_bytes) {
  if (!spec.percent) return static_cast<int64_t>(spec.value);
  return static_cast<int64_t>(std::floor(static_cast<double>(reference_bytes) * spec.value / 100.0));
}

}  // namespace remat
