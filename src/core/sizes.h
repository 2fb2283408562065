// Memory sizes for people: "1.50 GiB". (Parsing "16GiB" or "60%" belongs to planning:
// planning/size_parsing.h.)
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace remat {

// "1.50 GiB", "512 B": binary units for people (JSON output carries exact integers).
std::string FormatBytes(int64_t bytes);
// The same with `decimals` digits after the point above 1 KiB.
std::string FormatBytesWithDecimals(int64_t bytes, int decimals);

// A signed difference of sizes: "+1.20 MiB", "-512 B".
std::string FormatBytesDifference(int64_t bytes);

// Two sizes printed side by side ("the budget X is below the minimum peak Y"): with as many
// decimals as it takes for different sizes to read differently.
std::pair<std::string, std::string> FormatBytesApart(int64_t a, int64_t b);

}  // namespace remat
