// The verbs of the remat command and the exit codes they share (STYLE.md).
#pragma once

#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "core/errors.h"

namespace remat {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNoFeasibleSchedule = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBadInput = 3;
inline constexpr int kExitInternal = 70;

// UsageError (core/errors.h) is what exits with kExitUsage.

// Check for every -o/--output option: an empty path is a usage error (exit 2), never a run
// that silently writes nothing.
inline const CLI::Validator kOutputPath(
    [](const std::string& path) { return path.empty() ? std::string("the path is empty") : std::string(); },
    "PATH");

// Each adds a subcommand whose callback stores its exit code in `exit_code`.
void AddGraphCommands(CLI::App& app, int& exit_code);
void AddSolveCommand(CLI::App& app, int& exit_code);
// Evaluation verbs (docs/evaluation.md): sweep, maxbatch, approx-report, plot.
void AddSweepCommand(CLI::App& app, int& exit_code);
void AddMaxBatchCommand(CLI::App& app, int& exit_code);
void AddApproxReportCommand(CLI::App& app, int& exit_code);
void AddPlotCommand(CLI::App& app, int& exit_code);

}  // namespace remat
