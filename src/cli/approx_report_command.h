// `remat approx-report`: the LP rounding against the MILP (docs/evaluation.md).
#pragma once

#include <CLI/CLI.hpp>

namespace remat {

// Adds the verb to `app`; its callback stores the exit code in `exit_code`.
void AddApproxReportCommand(CLI::App& app, int& exit_code);

}  // namespace remat
