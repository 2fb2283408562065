// Human-readable tables for the terminal.
#pragma once

#include <string>
#include <vector>

namespace remat {

// Left-aligned columns separated by two spaces, a header row and a rule under it.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// "1.234x" for numerator / denominator, or "-" where the ratio is undefined (a zero or
// non-finite denominator, e.g. a graph whose costs are all zero).
std::string FormatRatio(double numerator, double denominator);
// "12.3%" for 100 * part / whole, or "-" where undefined.
std::string FormatPercent(double part, double whole);

}  // namespace remat
