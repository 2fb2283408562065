// `remat-run train`: plan, then train K SGD steps under the plan.
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddRunTrainCommand(CLI::App& app, int& exit_code);

}  // namespace remat
