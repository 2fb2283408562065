// The exit codes and option validators that remat and remat-run share (STYLE.md).
#pragma once

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/errors.h"

namespace remat {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNoFeasibleSchedule = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBadInput = 3;
inline constexpr int kExitInternal = 70;

// UsageError (core/errors.h) is what exits with kExitUsage.

// A real-valued option in [low, high]: NaN, infinities and values out of range are usage
// errors with a short message (CLI11's own range check lets NaN through).
inline CLI::Validator FiniteRange(double low, double high) {
  return CLI::Validator(
      [low, high](const std::string& text) {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(value) ||
            value < low || value > high) {
          return fmt::format("'{}' is not a number in [{:g}, {:g}]", text.substr(0, 40), low, high);
        }
        return std::string();
      },
      fmt::format("NUMBER in [{:g}, {:g}]", low, high));
}

// Check for every -o/--output option: an empty path is a usage error (exit 2), never a run
// that silently writes nothing.
inline const CLI::Validator kOutputPath(
    [](const std::string& path) { return path.empty() ? std::string("the path is empty") : std::string(); },
    "PATH");

}  // namespace remat
