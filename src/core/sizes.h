// Memory sizes for people: "1.50 GiB". (Parsing "16GiB" or "60%" belongs to planning:
// planning/size_parsing.h.)
#pragma once

#include <cstdint>
#include <string>

namespace remat {

// "1.50 GiB", "512 B": binary units for people (JSON output carries exact integers).
std::string FormatBytes(int64_t bytes);

}  // namespace remat
