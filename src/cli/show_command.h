// `remat show FILE`: a saved schedule as text: what it costs, what is proven about it and
// which nodes it recomputes where (docs/cli.md).
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddShowCommand(CLI::App& app, int& exit_code);

}  // namespace remat
