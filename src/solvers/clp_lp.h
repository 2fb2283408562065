// LP solves with COIN-OR CLP (dual simplex).
#pragma once

#include "solvers/linear_model.h"
#include "solvers/solver_types.h"

namespace remat {

// Every column is treated as continuous within its bounds.
SolverOutput SolveLpWithClp(const LinearModel& model, const LpOptions& options);

}  // namespace remat
