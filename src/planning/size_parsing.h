// Memory sizes on the command line and in Python: "16GiB", "512MB", "1.5e9", plain bytes, or
// "60%" of a reference such as the graph's no-rematerialization peak.
#pragma once

#include <cstdint>
#include <string>

namespace remat {

struct SizeSpec {
  bool percent = false;
  double value = 0;  // bytes, or a percentage when `percent`
};

// Throws std::invalid_argument with the accepted forms on malformed text (exit 2).
SizeSpec ParseSize(const std::string& text);

// Bytes for a spec; a percentage is taken of `reference_bytes` and rounded down.
int64_t ResolveSize(const SizeSpec& spec, int64_t reference_bytes);

}  // namespace remat
