// `remat-run step`: one training step following a plan, checked against autograd.
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddRunStepCommand(CLI::App& app, int& exit_code);

}  // namespace remat
