// LP relaxations on CLP's dual simplex (Debian's CLP barrier is slow without a fast
// Cholesky, so it is not used).
#include "solvers/clp_lp.h"

#include <chrono>

#include <ClpSimplex.hpp>

#include "solvers/clp_arrays.h"
#include "solvers/stdout_to_stderr.h"

namespace remat {

SolverOutput SolveLpWithClp(const LinearModel& model, const LpOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SolverOutput out;
  const StdoutToStderr redirect;  // CLP's log (with --verbose) never reaches stdout
  try {
    const CoinArrays arrays = ToCoin(model);
    ClpSimplex simplex;
    simplex.loadProblem(arrays.matrix, arrays.column_lower.data(), arrays.column_upper.data(),
                        arrays.objective.data(), arrays.row_lower.data(),
                        arrays.row_upper.data());
    simplex.setLogLevel(options.verbose ? 1 : 0);
    simplex.setMaximumWallSeconds(options.time_limit_s);
    simplex.dual();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int status = simplex.status();  // 0 optimal, 1 infeasible, 3 stopped, others errors
    if (status == 0) {
      out.status = SolveStatus::kOptimal;
      out.objective = simplex.objectiveValue();
      out.bound = out.objective;
      const double* solution = simplex.primalColumnSolution();
      out.values.assign(solution, solution + model.num_columns());
    } else if (status == 1) {
      out.status = SolveStatus::kInfeasible;
    } else if (status == 3) {
      out.status = SolveStatus::kTimeLimitNoSolution;
      out.message = "CLP stopped at its time limit";
    } else {
      out.status = SolveStatus::kError;
      out.message = "CLP finished with status " + std::to_string(status) + " (secondary " +
                    std::to_string(simplex.secondaryStatus()) + ")";
    }
  } catch (const std::bad_alloc&) {
    out.status = SolveStatus::kError;
    out.message = "out of memory building or solving the LP";
  } catch (const CoinError& error) {
    out.status = SolveStatus::kError;
    out.message = "CLP error: " + error.message();
  }
  return out;
}

}  // namespace remat
