// `remat maxbatch`: the largest batch each strategy fits in a device (docs/evaluation.md).
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddMaxBatchCommand(CLI::App& app, int& exit_code);

}  // namespace remat
