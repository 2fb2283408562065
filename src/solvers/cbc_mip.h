// MILP solves with COIN-OR CBC through its full driver (presolve, cuts, heuristics).
#pragma once

#include <vector>

#include "solvers/linear_model.h"
#include "solvers/solver_types.h"

namespace remat {

// `start` (empty or one value per column) is passed as a MIP start. Never throws for solver
// trouble: the outcome is in the status.
SolverOutput SolveMipWithCbc(const LinearModel& model, const std::vector<double>& start,
                             const MipOptions& options);

}  // namespace remat
