// Names of solver outcomes, as printed and written to JSON.
#include "solvers/solver_types.h"

namespace remat {

const char* SolveStatusName(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal: return "optimal";
    case SolveStatus::kFeasible: return "feasible";
    case SolveStatus::kInfeasible: return "infeasible";
    case SolveStatus::kNoSolution: return "none_found";
    case SolveStatus::kTimeLimitNoSolution: return "time_limit_no_solution";
    case SolveStatus::kError: return "error";
  }
  return "?";
}

}  // namespace remat
