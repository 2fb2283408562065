// `remat-run profile`: time every node and write a cost profile.
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddRunProfileCommand(CLI::App& app, int& exit_code);

}  // namespace remat
