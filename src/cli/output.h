// Human-readable tables for the terminal.
#pragma once

#include <string>
#include <vector>

namespace remat {

// Left-aligned columns separated by two spaces, a header row and a rule under it.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace remat
