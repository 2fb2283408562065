// The CBC solve itself, run inside the current process; SolveMipWithCbc runs it in a child
// process under a hard wall-clock guard (cbc_mip.cc).
#pragma once

#include <functional>
#include <vector>

#include "solvers/linear_model.h"
#include "solvers/solver_types.h"

namespace remat {

// Receives each new incumbent of the original model: objective and one value per column.
using SolutionSink = std::function<void(double objective, const double* values, int32_t count)>;

SolverOutput SolveMipWithCbcInProcess(const LinearModel& model, const std::vector<double>& start,
                                      const MipOptions& options, const SolutionSink& sink);

}  // namespace remat
