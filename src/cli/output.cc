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

std::string FormatTableWithin(const std::vector<std::string>& header,
                              const std::vector<std::vector<std::string>>& rows, size_t width,
                              size_t key_columns) {
  auto column_width = [&](size_t c) {
    size_t w = header[c].size();
    for (const auto& row : rows) w = std::max(w, c < row.size() ? row[c].size() : 0);
    return w + 2;  // with the separator
  };
  size_t key_width = 0;
  for (size_t c = 0; c < key_columns && c < header.size(); ++c) key_width += column_width(c);
  std::string text;
  size_t c = key_columns;
  while (c < header.size() || text.empty()) {
    // Columns [c, end) fit beside the key columns (at least one, however wide).
    size_t end = c;
    size_t used = key_width;
    while (end < header.size() && (end == c || used + column_width(end) - 2 <= width)) {
      used += column_width(end);
      ++end;
    }
    auto pick = [&](const std::vector<std::string>& row) {
      std::vector<std::string> part;
      for (size_t k = 0; k < key_columns && k < row.size(); ++k) part.push_back(row[k]);
      for (size_t k = c; k < end && k < row.size(); ++k) part.push_back(row[k]);
      return part;
    };
    std::vector<std::vector<std::string>> part_rows;
    for (const auto& row : rows) part_rows.push_back(pick(row));
    if (!text.empty()) text += "\n";
    text += FormatTable(pick(header), part_rows);
    if (end == c) break;  // only key columns
    c = end;
  }
  return text;
}

std::string WrapText(const std::string& text, size_t width, const std::string& first_indent,
                     const std::string& rest_indent) {
  std::string out;
  std::string line = first_indent;
  bool empty = true;  // no word on `line` yet
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = text.find(' ', pos);
    const size_t end = space == std::string::npos ? text.size() : space;
    const std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = rest_indent;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

void PrintWrapped(const std::string& text) {
  fmt::print("{}", WrapText(text, kTextWidth, "", "  "));
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
