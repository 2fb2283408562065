// Human-readable tables for the terminal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace remat {

// Human output stays within this many columns.
inline constexpr size_t kTextWidth = 120;

// `text` broken at spaces into lines of at most `width` columns (a longer word gets a line of
// its own), the first starting with `first_indent`, the others with `rest_indent`; every line
// ends with a newline.
std::string WrapText(const std::string& text, size_t width, const std::string& first_indent,
                     const std::string& rest_indent);
// Prints `text` on stdout wrapped at kTextWidth, continuation lines indented by two spaces.
void PrintWrapped(const std::string& text);

// Left-aligned columns separated by two spaces, a header row and a rule under it.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// FormatTable within `width` columns: when the table is wider, its columns after the first
// `key_columns` are split over several tables (blank lines between), each repeating the key
// columns.
std::string FormatTableWithin(const std::vector<std::string>& header,
                              const std::vector<std::vector<std::string>>& rows, size_t width,
                              size_t key_columns);

// "1.234x" for numerator / denominator, or "-" where the ratio is undefined (a zero or
// non-finite denominator, e.g. a graph whose costs are all zero).
std::string FormatRatio(double numerator, double denominator);
// "12.3%" for 100 * part / whole, or "-" where undefined.
std::string FormatPercent(double part, double whole);

}  // namespace remat
