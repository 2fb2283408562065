// Column-aligned text tables.
#include "cli/output.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace remat {

std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      text += row[c];
      if (c + 1 < row.size()) text += std::string(width[c] - row[c].size() + 2, ' ');
    }
    return text + "\n";
  };
  std::string text = line(header);
  size_t total = 0;
  for (size_t c = 0; c < width.size(); ++c) total += width[c] + (c + 1 < width.size() ? 2 : 0);
  text += std::string(total, '-') + "\n";
  for (const auto& row : rows) text += line(row);
  return text;
}

std::string FormatRatio(double numerator, double denominator) {
  const double ratio = numerator / denominator;
  if (!(denominator > 0) || !std::isfinite(ratio)) return "-";
  return fmt::format("{:.3f}x", ratio);
}

std::string FormatPercent(double part, double whole) {
  const double percent = 100.0 * part / whole;
  if (!(whole > 0) || !std::isfinite(percent)) return "-";
  return fmt::format("{:.1f}%", percent);
}

}  // namespace remat
