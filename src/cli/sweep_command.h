// `remat sweep`: strategies across a range of budgets (docs/evaluation.md).
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddSweepCommand(CLI::App& app, int& exit_code);

}  // namespace remat
