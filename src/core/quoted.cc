// JSON's string escaping is the escaping: nlohmann's dump with invalid UTF-8 replaced.
#include "core/quoted.h"

#include <nlohmann/json.hpp>

namespace remat {

std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Printable(const std::string& text) {
  const std::string quoted = Quoted(text);
  return quoted.substr(1, quoted.size() - 2);
}

}  // namespace remat
