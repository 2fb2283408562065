// `remat solve`: plan one graph at one budget with one or more strategies.
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddSolveCommand(CLI::App& app, int& exit_code);

}  // namespace remat
