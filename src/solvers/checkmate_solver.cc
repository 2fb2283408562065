// Optimal schedules from the Checkmate MILP and the LP lower bound.
#include "solvers/checkmate_solver.h"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/recompute.h"
#include "solvers/cbc_mip.h"
#include "solvers/clp_lp.h"
#include "strategies/registry.h"

namespace remat {
namespace {

// The cheapest baseline that fits, as the MIP start; nullopt when none fits.
std::optional<StrategyResult> BestBaseline(const Graph& graph, int64_t budget_bytes) {
  std::optional<StrategyResult> best;
  for (const StrategySpec& spec : BaselineStrategies()) {
    if (spec.needs_training_structure && !graph.has_training_structure()) continue;
    StrategyResult result = spec.run(graph, budget_bytes);
    if (result.status != FitStatus::kFits) continue;
    if (!best || IsBetter(result, *best)) best = std::move(result);
  }
  return best;
}

}  // namespace

double OptimizerResult::gap() const {
  if (!schedule || schedule->cost <= 0) return std::nan("");
  return std::max(0.0, (schedule->cost - lower_bound) / schedule->cost);
}

StrategyResult DecodeSchedule(const Graph& graph, const CheckmateModel& model,
                              const std::vector<double>& values, double threshold,
                              int64_t budget_bytes, const std::string& strategy,
                              const std::string& parameters) {
  Schedule schedule = ScheduleFromCheckpoints(graph, model.DecodeS(values, threshold));
  return EvaluateSchedule(graph, strategy, std::move(schedule), budget_bytes, parameters);
}

OptimizerResult SolveOptimal(const Graph& graph, int64_t budget_bytes,
                             const OptimalOptions& options) {
  OptimizerResult result;
  result.strategy = "optimal";
  CheckmateModelOptions model_options = options.model;
  model_options.integer = true;
  const CheckmateModel model = BuildCheckmateModel(graph, budget_bytes, model_options);
  result.full_size = model.full_size;
  result.size = model.size;

  if (model.proven_infeasible || MinimumPeakLowerBound(graph) > budget_bytes) {
    result.status = SolveStatus::kInfeasible;
    result.message = "some node and its inputs alone exceed the budget";
    return result;
  }
  std::vector<double> start;
  if (options.mip_start) {
    if (const auto baseline = BestBaseline(graph, budget_bytes)) {
      std::vector<double> values = model.Assignment(graph, baseline->schedule);
      if (model.lp.MaxViolation(values) <= 1e-6) {
        start = std::move(values);
        result.start = fmt::format("{} (cost {:.6g})", baseline->strategy, baseline->cost);
      }
    }
  }
  const SolverOutput out = SolveMipWithCbc(model.lp, start, options.mip);
  result.status = out.status;
  result.solve_time_s = out.seconds;
  result.message = out.message;
  if (std::isfinite(out.bound)) result.lower_bound = std::max(0.0, model.CostOf(out.bound));
  if (out.values.empty()) return result;
  StrategyResult decoded =
      DecodeSchedule(graph, model, out.values, 0.5, budget_bytes, "optimal",
                     fmt::format("CBC {}, {} nodes, {:.1f} s", SolveStatusName(out.status),
                                 out.nodes, out.seconds));
  if (decoded.status != FitStatus::kFits) {
    throw InternalError(fmt::format("the MILP solution simulates to a peak of {} B, over the "
                                    "budget of {} B: the formulation and the simulator disagree",
                                    decoded.peak_bytes, budget_bytes));
  }
  // The rebuilt R is never more expensive than the solver's, so its cost can only be lower.
  if (result.status == SolveStatus::kOptimal) {
    result.lower_bound = std::min(result.lower_bound, decoded.cost);
  }
  result.schedule = std::move(decoded);
  return result;
}

LowerBound LpLowerBound(const Graph& graph, int64_t budget_bytes, const LpOptions& options) {
  const CheckmateModel model =
      BuildCheckmateModel(graph, budget_bytes, {.integer = false, .reductions = true});
  LowerBound bound;
  if (model.proven_infeasible || MinimumPeakLowerBound(graph) > budget_bytes) {
    bound.status = SolveStatus::kInfeasible;
    bound.message = "some node and its inputs alone exceed the budget";
    return bound;
  }
  const SolverOutput out = SolveLpWithClp(model.lp, options);
  bound.status = out.status;
  bound.solve_time_s = out.seconds;
  bound.message = out.message;
  if (out.status == SolveStatus::kOptimal) bound.cost = model.CostOf(out.objective);
  return bound;
}

}  // namespace remat
