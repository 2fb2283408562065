// Typed reads of JSON fields that fail with InputError naming the file and the field path.
// Internal to core: only core's .cc files include nlohmann/json.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace remat::json_fields {

using nlohmann::json;

inline std::string TypeName(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number_float()) return "a number with a fraction";
  const std::string type = value.type_name();
  return (type == "array" || type == "object" ? "an " : "a ") + type;
}

// A field path inside one file, for messages like "g.json: nodes[3].bytes: ...".
struct Where {
  std::string file;
  std::string path;
  Where operator/(const std::string& key) const {
    return {file, path.empty() ? key : path + "." + key};
  }
  Where operator[](size_t index) const { return {file, fmt::format("{}[{}]", path, index)}; }
  [[noreturn]] void Fail(const std::string& what) const {
    throw InputError(path.empty() ? fmt::format("{}: {}", file, what)
                                  : fmt::format("{}: {}: {}", file, path, what));
  }
};

inline const json& Field(const json& object, const std::string& key, const Where& where) {
  if (!object.is_object()) where.Fail("expected an object, got " + TypeName(object));
  const auto it = object.find(key);
  if (it == object.end()) (where / key).Fail("missing field");
  return *it;
}

inline int64_t AsInt64(const json& value, const Where& where) {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      where.Fail("integer too large");
    }
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return static_cast<int64_t>(d);
    }
  }
  where.Fail("expected an integer, got " + TypeName(value));
}

// A node id: an integer in [0, count).
inline int32_t AsId(const json& value, int64_t count, const Where& where) {
  const int64_t id = AsInt64(value, where);
  if (id < 0 || id >= count) {
    where.Fail(fmt::format("id {} is out of range: the graph has {} nodes (ids 0..{})", id, count,
                           count - 1));
  }
  return static_cast<int32_t>(id);
}

inline double AsDouble(const json& value, const Where& where) {
  if (!value.is_number()) where.Fail("expected a number, got " + TypeName(value));
  return value.get<double>();
}

inline std::string AsString(const json& value, const Where& where) {
  if (!value.is_string()) where.Fail("expected a string, got " + TypeName(value));
  return value.get<std::string>();
}

inline bool AsBool(const json& value, const Where& where) {
  if (!value.is_boolean()) where.Fail("expected true or false, got " + TypeName(value));
  return value.get<bool>();
}

inline const json& AsArray(const json& value, const Where& where) {
  if (!value.is_array()) where.Fail("expected an array, got " + TypeName(value));
  return value;
}

// Parses a whole file's text; a 0-byte file, truncated or malformed text is an InputError.
inline json ParseText(const std::string& text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError(fmt::format("{}: the file is empty", file));
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& error) {
    throw InputError(fmt::format("{}: not valid JSON (byte {}): {}", file, error.byte,
                                 text.size() <= error.byte ? "the file ends too early (truncated?)"
                                                           : std::string(error.what())));
  } catch (const json::exception& error) {
    // A number that cannot be represented (1e400). Parsing again with a callback names the
    // field: the last key seen. Only on this path, because the library's callback parser
    // takes time quadratic in the length of an array of objects.
    std::string last_key;
    const json::parser_callback_t track = [&last_key](int /*depth*/, json::parse_event_t event,
                                                      json& value) {
      if (event == json::parse_event_t::key && value.is_string()) {
        last_key = value.get<std::string>();
      }
      return true;
    };
    try {
      const json discarded = json::parse(text, track);
    } catch (const json::exception&) {
    }
    throw InputError(fmt::format("{}: field '{}': {}", file,
                                 last_key.empty() ? "(top level)" : last_key,
                                 error.id == 406 ? "a number too large to represent"
                                                 : std::string(error.what())));
  }
}

}  // namespace remat::json_fields
