// Optimal schedules from the Checkmate MILP and the LP lower bound.
#include "solvers/checkmate_solver.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/recompute.h"
#include "solvers/cbc_mip.h"
#include "solvers/clp_lp.h"
#include "solvers/absence_bound.h"
#include "solvers/lower_bound.h"
#include "strategies/best_heuristic.h"

namespace remat {
namespace {

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
  const auto begin = std::chrono::steady_clock::now();
  auto left = [&] {
    return options.mip.time_limit_s -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  OptimizerResult result;
  result.strategy = "optimal";
  if (MinimumPeakLowerBound(graph) > budget_bytes) {
    result.status = SolveStatus::kInfeasible;
    result.message = "some node and its inputs alone exceed the budget";
    return result;
  }
  // The start: the best heuristic schedule. When the MILP is too big for the time anyway, the
  // heuristics get nearly all of it (a tenth is kept for the bound); otherwise a quarter.
  const int64_t columns = EstimateCheckmateColumns(graph);
  const bool milp_fits = LpFitsTime(columns, options.mip.time_limit_s * 0.75);
  std::optional<StrategyResult> heuristic;
  if (options.mip_start || !milp_fits) {
    const double share = milp_fits ? std::min(30.0, options.mip.time_limit_s / 4)
                                   : options.mip.time_limit_s * 0.9;
    heuristic = options.heuristic ? *options.heuristic
                                  : BestHeuristic(graph, budget_bytes, {.time_limit_s = share});
    if (heuristic->status != FitStatus::kFits) heuristic.reset();
  }
  if (!milp_fits || !LpFitsTime(columns, left())) {
    // The MILP cannot even be built and solved in the time: answer with the start, bounded.
    result.full_size.columns = static_cast<int32_t>(std::min<int64_t>(columns, INT32_MAX));
    AbsenceBound bound;
    if (options.known_lower_bound) {
      bound.status = SolveStatus::kOptimal;
      bound.cost = *options.known_lower_bound;
    } else {
      bound = AbsenceGapLowerBound(graph, budget_bytes,
                                   {.time_limit_s = std::max(1.0, left()), .threads = options.mip.threads});
    }
    if (bound.status == SolveStatus::kInfeasible) {
      result.status = SolveStatus::kInfeasible;
      result.message = bound.message;
      return result;
    }
    result.message = fmt::format("MILP skipped: about {} columns, too many for {:.0f} s; the best "
                                 "heuristic schedule is returned",
                                 columns, std::max(0.0, options.mip.time_limit_s));
    if (bound.status == SolveStatus::kOptimal || bound.status == SolveStatus::kFeasible) {
      result.lower_bound = bound.cost;
    }
    if (!heuristic) {
      result.status = SolveStatus::kTimeLimitNoSolution;
      return result;
    }
    result.status = SolveStatus::kFeasible;
    result.start = fmt::format("local-search (cost {:.6g})", heuristic->cost);
    heuristic->parameters = "MILP skipped; " + heuristic->parameters;
    heuristic->strategy = "optimal";
    result.schedule = std::move(heuristic);
    return result;
  }
  CheckmateModelOptions model_options = options.model;
  model_options.integer = true;
  const CheckmateModel model = BuildCheckmateModel(graph, budget_bytes, model_options);
  result.full_size = model.full_size;
  result.size = model.size;
  if (model.proven_infeasible) {
    result.status = SolveStatus::kInfeasible;
    result.message = "some node and its inputs alone exceed the budget";
    return result;
  }
  std::vector<double> start;
  if (heuristic && options.mip_start) {
    std::vector<double> values = model.Assignment(graph, heuristic->schedule);
    if (model.lp.MaxViolation(values) <= 1e-6) {
      start = std::move(values);
      result.start = fmt::format("local-search (cost {:.6g})", heuristic->cost);
    }
  }
  MipOptions mip = options.mip;
  mip.time_limit_s = std::max(0.5, left());  // model building and the start count
  const SolverOutput out = SolveMipWithCbc(model.lp, start, mip);
  result.status = out.status;
  result.solve_time_s = out.seconds;
  result.message = out.message;
  if (std::isfinite(out.bound)) result.lower_bound = std::max(0.0, model.CostOf(out.bound));
  if (options.known_lower_bound) result.lower_bound = std::max(result.lower_bound, *options.known_lower_bound);
  if (out.values.empty()) {
    if (heuristic) {  // CBC found nothing in the time: the start is still a valid answer
      result.status = SolveStatus::kFeasible;
      heuristic->strategy = "optimal";
      result.schedule = std::move(heuristic);
    }
    return result;
  }
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
  if (heuristic && heuristic->cost < decoded.cost) {  // CBC did not keep the start
    heuristic->strategy = "optimal";
    decoded = std::move(*heuristic);
  }
  result.schedule = std::move(decoded);
  return result;
}

LowerBound LpLowerBound(const Graph& graph, int64_t budget_bytes, const LpOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  const CheckmateModel model =
      BuildCheckmateModel(graph, budget_bytes, {.integer = false, .reductions = true});
  LowerBound bound;
  if (model.proven_infeasible || MinimumPeakLowerBound(graph) > budget_bytes) {
    bound.status = SolveStatus::kInfeasible;
    bound.message = "some node and its inputs alone exceed the budget";
    return bound;
  }
  LpOptions lp = options;  // building the model counts against the limit
  lp.time_limit_s = std::max(0.1, options.time_limit_s -
                                      std::chrono::duration<double>(
                                          std::chrono::steady_clock::now() - begin).count());
  const SolverOutput out = SolveLpWithClp(model.lp, lp);
  bound.status = out.status;
  bound.solve_time_s = out.seconds;
  bound.message = out.message;
  if (out.status == SolveStatus::kOptimal) bound.cost = model.CostOf(out.objective);
  return bound;
}

}  // namespace remat
