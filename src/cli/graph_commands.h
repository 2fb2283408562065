// `remat graph`: info, convert, linear and random-layered.
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddGraphCommands(CLI::App& app, int& exit_code);

}  // namespace remat
