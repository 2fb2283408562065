// LP relaxations on CLP's dual simplex (Debian's CLP barrier is slow without a fast
// Cholesky, so it is not used).
#include "solvers/clp_lp.h"

#include <chrono>

#include <ClpEventHandler.hpp>
#include <ClpSimplex.hpp>

#include "core/cancellation.h"
#include "solvers/clp_arrays.h"
#include "solvers/stdout_to_stderr.h"

namespace remat {
namespace {

// Stops the simplex at the end of an iteration once the call is cancelled (CLP status 5).
class CancelHandler : public ClpEventHandler {
 public:
  using ClpEventHandler::ClpEventHandler;
  ClpEventHandler* clone() const override { return new CancelHandler(*this); }
  int event(Event which) override { return which == endOfIteration && DeadlinePassed() ? 0 : -1; }
};

}  // namespace

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
    CancelHandler cancel;
    simplex.passInEventHandler(&cancel);
    simplex.dual();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // 0 optimal, 1 infeasible, 3 stopped at the limit, 5 stopped by the handler, others errors
    const int status = simplex.status();
    if (status == 0) {
      out.status = SolveStatus::kOptimal;
      out.objective = simplex.objectiveValue();
      out.bound = out.objective;
      const double* solution = simplex.primalColumnSolution();
      out.values.assign(solution, solution + model.num_columns());
    } else if (status == 1) {
      out.status = SolveStatus::kInfeasible;
    } else if (status == 3 || status == 5) {
      out.status = SolveStatus::kTimeLimitNoSolution;
      out.message = status == 3 ? "CLP stopped at its time limit" : "cancelled";
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
