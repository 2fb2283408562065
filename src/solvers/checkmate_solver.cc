// Optimal schedules from the Checkmate MILP and the LP lower bound.
#include "solvers/checkmate_solver.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/errors.h"
#include "core/recompute.h"
#include "core/sizes.h"
#include "solvers/cbc_mip.h"
#include "solvers/clp_lp.h"
#include "solvers/absence_bound.h"
#include "solvers/lower_bound.h"
#include "solvers/rounding.h"
#include "solvers/window_search.h"
#include "strategies/best_heuristic.h"

namespace remat {

double OptimizerResult::gap() const {
  if (!schedule) return std::nan("");
  return RelativeGap(schedule->cost, lower_bound);
}

StrategyResult DecodeSchedule(const Graph& graph, const CheckmateModel& model,
                              const std::vector<double>& values, double threshold,
                              int64_t budget_bytes, const std::string& strategy,
                              const std::string& parameters) {
  Schedule schedule = ScheduleFromCheckpoints(graph, model.DecodeS(values, threshold));
  return EvaluateSchedule(graph, strategy, std::move(schedule), budget_bytes, parameters);
}

namespace {

// The whole MILP, started from `start` when it is valid in the model; fills `result`.
void SolveWholeMilp(const Graph& graph, int64_t budget_bytes, const OptimalOptions& options,
                    double time_limit_s, double patience_s, std::optional<StrategyResult> start,
                    const std::string& start_name, const std::function<double()>& elapsed,
                    OptimizerResult& result) {
  CheckmateModelOptions model_options = options.model;
  model_options.integer = true;
  const CheckmateModel model = BuildCheckmateModel(graph, budget_bytes, model_options);
  result.full_size = model.full_size;
  result.size = model.size;
  if (model.proven_infeasible) {
    result.status = SolveStatus::kInfeasible;
    result.message = "some node and its inputs alone exceed the budget";
    return;
  }
  std::vector<double> values;
  if (start) {
    // Holds the rows would charge but the simulator does not make an exact start invalid.
    values = model.Assignment(graph, WithoutUselessHolds(graph, start->schedule));
    if (model.lp.MaxViolation(values) > 1e-6) values.clear();
    result.start = fmt::format("{} (cost {:.6g}){}", start_name, start->cost,
                               values.empty() ? ", not valid in the model: not used" : "");
  }
  MipOptions mip = options.mip;
  // Model building counts; CBC's process is stopped at the end of the time left, and its own
  // limit comes a little earlier so that it can still report its bound.
  const double left_s = std::max(0.5, time_limit_s - elapsed());
  mip.time_limit_s = 0.9 * left_s;
  mip.hard_deadline_s = left_s;
  mip.patience_s = patience_s;
  if (result.lower_bound > 0) {  // a schedule this cheap is proven optimal by the bound
    mip.stop_at_objective = model.ObjectiveOf(
        result.lower_bound + options.mip.relative_gap * result.lower_bound);
  }
  mip.progress = nullptr;
  if (options.progress) {
    // Runs in CBC's child process (cbc_mip.cc), which shares stderr.
    mip.progress = [&](const SolverProgress& p) {
      options.progress({.phase = "MILP",
                        .elapsed_s = elapsed(),
                        .cost = std::isfinite(p.incumbent) ? model.CostOf(p.incumbent)
                                                           : std::numeric_limits<double>::infinity(),
                        .bound = std::max(result.lower_bound,
                                          std::isfinite(p.bound) ? model.CostOf(p.bound) : 0.0),
                        .detail = fmt::format("{} branch-and-bound nodes", p.nodes)});
    };
  }
  const SolverOutput out = SolveMipWithCbc(model.lp, values, mip);
  result.solve_time_s = out.seconds;
  result.message = out.message;
  if (std::isfinite(out.bound)) {
    result.lower_bound = std::max(result.lower_bound, model.CostOf(out.bound));
  }
  if (out.values.empty()) {
    result.status = out.status;
    return;  // the caller keeps its start
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
  result.status = out.status;
  // The rebuilt R is never more expensive than the solver's, so its cost can only be lower.
  if (out.status == SolveStatus::kOptimal) {
    result.lower_bound = std::min(result.lower_bound, decoded.cost);
  }
  if (start && start->cost < decoded.cost) decoded = std::move(*start);  // CBC did not keep it
  decoded.strategy = "optimal";
  if (WithinGap(decoded.cost, result.lower_bound, options.mip.relative_gap)) {
    result.status = SolveStatus::kOptimal;  // the bound proves it, whether or not CBC did
  }
  result.schedule = std::move(decoded);
}

// The heuristics' start within `time_limit_s` (or options.heuristic when given): in `start`
// when it fits the budget, else in `over`.
void ChooseStart(const Graph& graph, int64_t budget_bytes, const OptimalOptions& options,
                 double time_limit_s, std::optional<StrategyResult>& start,
                 std::optional<StrategyResult>& over) {
  const DeadlineScope deadline(time_limit_s);
  if (options.heuristic) {
    start = *options.heuristic;
  } else {
    try {
      start = BestHeuristic(graph, budget_bytes, {.time_limit_s = SecondsLeft()});
    } catch (const TimeLimitReached&) {
      // No heuristic schedule in the time: the known candidate, if any, is the start.
    }
  }
  if (options.candidate_start && (!start || IsBetter(*options.candidate_start, *start))) {
    start = options.candidate_start;
  }
  // The LP rounding, when its model fits the time left: it often starts lower on models whose
  // heuristics stall (docs/solvers.md, "optimal").
  const double left_s = SecondsLeft();
  if (options.rounding_start && !DeadlinePassed() &&
      LpFitsTime(EstimateCheckmateColumns(graph), left_s)) {
    try {
      OptimizerResult rounded =
          SolveApproxDeterministic(graph, budget_bytes, {.lp = {.time_limit_s = left_s}});
      if (rounded.schedule && (!start || IsBetter(*rounded.schedule, *start))) {
        start = rounded.schedule;
      }
    } catch (const TimeLimitReached&) {
      // The rounding's schedule was abandoned at the deadline; the heuristics' start stays.
    }
  }
  if (!start) return;
  if (start->status != FitStatus::kFits) {
    over = std::move(start);
    start.reset();
  }
}

// Whether the start's cost meets the lower bound, within the MILP's relative gap.
bool GapClosed(const std::optional<StrategyResult>& start, double lower_bound,
               const OptimalOptions& options) {
  return start && WithinGap(start->cost, lower_bound, options.mip.relative_gap);
}

// Whether the decision question (decide_at_cost) is answered by the start or by the bound.
bool DecidedAtCost(const std::optional<StrategyResult>& start, double lower_bound,
                   const OptimalOptions& options) {
  return options.decide_at_cost &&
         ((start && start->cost <= *options.decide_at_cost) ||
          lower_bound > *options.decide_at_cost);
}

// Ends the search with the start as its schedule (optimal when it meets the lower bound, else
// `status`), or with no schedule when there is no start.
void FinishWithStart(std::optional<StrategyResult>& start, SolveStatus status,
                     const OptimalOptions& options, OptimizerResult& result) {
  if (!start) {
    result.status = SolveStatus::kTimeLimitNoSolution;
    if (result.message.empty()) result.message = "no schedule within the budget was found";
    return;
  }
  result.status = GapClosed(start, result.lower_bound, options) ? SolveStatus::kOptimal : status;
  start->strategy = "optimal";
  result.schedule = std::move(start);
}

// Raises result.lower_bound to the absence-gap bound; false (with the result's status and
// message set) when that bound proves the budget infeasible.
bool AddAbsenceBound(const Graph& graph, int64_t budget_bytes, const OptimalOptions& options,
                     double time_limit_s, OptimizerResult& result) {
  const AbsenceBound bound = AbsenceGapLowerBound(
      graph, budget_bytes, {.time_limit_s = time_limit_s, .threads = options.mip.threads});
  if (bound.status == SolveStatus::kInfeasible) {
    result.status = SolveStatus::kInfeasible;
    result.message = bound.message;
    return false;
  }
  if (bound.status == SolveStatus::kOptimal || bound.status == SolveStatus::kFeasible) {
    result.lower_bound = std::max(result.lower_bound, bound.cost);
  }
  return true;
}

// Improves `start` (or, without one, repairs `over`) window by window for `time_limit_s`;
// `start` becomes the best fitting schedule found.
WindowSearchResult SearchWindows(const Graph& graph, int64_t budget_bytes,
                                 const OptimalOptions& options, double time_limit_s,
                                 double patience_s, double lower_bound,
                                 const std::function<double()>& elapsed,
                                 std::optional<StrategyResult>& start,
                                 const std::optional<StrategyResult>& over) {
  auto report = [&](double cost, const std::string& detail) {
    if (!options.progress) return;
    options.progress({.phase = "window search",
                      .elapsed_s = elapsed(),
                      .cost = cost,
                      .bound = lower_bound,
                      .detail = detail});
  };
  report(start ? start->cost : std::numeric_limits<double>::infinity(),
         start ? "starting" : "repairing the start");
  const WindowSearchResult windows = ImproveByWindows(
      graph, budget_bytes, start ? *start : *over,
      {.time_limit_s = time_limit_s,
       .threads = options.mip.threads,
       .seed = options.mip.seed,
       // The gap target, or the cost cap of a decision question when that is higher.
       .stop_at_cost = std::max(GapTargetCost(lower_bound, options.mip.relative_gap),
                                options.decide_at_cost.value_or(
                                    -std::numeric_limits<double>::infinity())),
       .patience_s = patience_s,
       .progress = [&](const WindowProgress& p) {
         report(p.cost, fmt::format("{} {} tried, {} improved the schedule", p.windows,
                                    p.windows == 1 ? "window" : "windows", p.improvements));
       }});
  if (windows.best.status == FitStatus::kFits) start = windows.best;
  return windows;
}

// What the window search did, for the result's message; `has_start` tells whether a fitting
// start exists after it.
std::string DescribeWindowSearch(const WindowSearchResult& windows, bool has_start) {
  std::string repair;
  if (windows.repaired) {
    repair = "the start repaired, ";
  } else if (!has_start) {
    const auto [before, after] = FormatBytesApart(windows.excess_before, windows.excess_after);
    repair = fmt::format("the start not repaired (bytes over the budget, summed over stages: {} "
                         "-> {}), ", before, after);
  }
  return fmt::format("window search: {} {} tried, {}{} improved the schedule, {:.1f} s{}",
                     windows.windows, windows.windows == 1 ? "window" : "windows", repair,
                     windows.improvements, windows.seconds,
                     windows.local_optimum ? ", no window improves it"
                     : windows.stalled  ? ", stopped: no improving window within its patience"
                     : windows.too_large
                         ? ", stopped: every stage that recomputes has too large a model"
                         : "");
}

}  // namespace

namespace {

// The search of SolveOptimal; `reason` says why it ended when neither a proof nor the gap target
// did (SolveOptimal works those out from the result).
OptimizerResult SearchOptimal(const Graph& graph, int64_t budget_bytes,
                              const OptimalOptions& options, std::string& reason) {
  const auto begin = std::chrono::steady_clock::now();
  const double limit = options.mip.time_limit_s;
  const std::function<double()> elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  // The caller's deadline (core/cancellation.h) holds too; none left once cancelled.
  auto left = [&] { return std::min(SecondsLeft(), limit - elapsed()); };
  OptimizerResult result;
  result.strategy = "optimal";
  if (MinimumPeakLowerBound(graph) > budget_bytes) {
    result.status = SolveStatus::kInfeasible;
    result.message = "some node and its inputs alone exceed the budget";
    return result;
  }
  // Small models go straight to the whole MILP, which can prove optimality; larger ones first
  // improve the start window by window, and get the whole MILP if it still fits the time.
  const int64_t columns = EstimateCheckmateColumns(graph);
  result.full_size.columns = static_cast<int32_t>(std::min<int64_t>(columns, INT32_MAX));
  const bool whole_first = LpFitsTime(columns, limit / 4);
  const bool milp_fits = LpFitsTime(columns, limit * 0.75);

  std::optional<StrategyResult> start;
  std::optional<StrategyResult> over;  // the heuristics' smallest peak, when nothing fits
  if (options.mip_start || !whole_first) {
    ChooseStart(graph, budget_bytes, options,
                milp_fits ? std::min(30.0, limit / 4) : limit * 0.5, start, over);
  }
  // Which strategy the start came from ("local-search" unless an earlier strategy's was better).
  const std::string start_name = start ? start->strategy : over ? over->strategy : "local-search";
  if (options.known_lower_bound) result.lower_bound = *options.known_lower_bound;
  auto closed = [&] { return GapClosed(start, result.lower_bound, options); };
  auto decided = [&] { return DecidedAtCost(start, result.lower_bound, options); };

  // The bound, when no one computed it: it certifies the gap and can prove the start optimal.
  if (!options.known_lower_bound &&
      !AddAbsenceBound(graph, budget_bytes, options,
                       std::max(0.5, left() / (whole_first ? 10 : 4)), result)) {
    return result;
  }
  if (closed() || decided()) {
    result.message = closed() ? "the start's cost meets the lower bound within the gap target"
                              : "decided against the cost cap without the MILP";
    if (decided() && !closed()) reason = "cost cap decided";
    if (start) result.start = fmt::format("{} (cost {:.6g})", start_name, start->cost);
    FinishWithStart(start, SolveStatus::kFeasible, options, result);
    return result;
  }
  if (whole_first) {
    SolveWholeMilp(graph, budget_bytes, options, limit, 0, start, start_name, elapsed, result);
    if (!result.schedule && result.status != SolveStatus::kInfeasible) {
      // CBC found nothing in the time.
      FinishWithStart(start, SolveStatus::kFeasible, options, result);
    }
    return result;
  }

  if (!start && !over) {
    FinishWithStart(start, SolveStatus::kFeasible, options, result);
    return result;
  }
  result.start = start ? fmt::format("{} (cost {:.6g})", start_name, start->cost)
                       : fmt::format("{}, over the budget (peak {})", start_name,
                                     FormatBytes(over->peak_bytes));
  // The search must keep paying for its time: without an improvement it may add at most half
  // of what the start and the bound took (a second at least).
  const double patience_s = options.patience_s > 0
                                ? options.patience_s
                                : std::max(1.0, 0.5 * (elapsed() + options.time_before_s));
  const WindowSearchResult windows =
      SearchWindows(graph, budget_bytes, options, milp_fits ? left() * 0.4 : left(), patience_s,
                    result.lower_bound, elapsed, start, over);
  const std::string searched = DescribeWindowSearch(windows, start.has_value());
  if (windows.local_optimum || windows.stalled || windows.too_large) {
    reason = "no improving window";
  }
  if (closed() || decided()) {
    result.message = searched + (closed() ? "; the cost meets the lower bound within the gap target"
                                          : "; decided against the cost cap");
    if (decided() && !closed()) reason = "cost cap decided";
    FinishWithStart(start, SolveStatus::kFeasible, options, result);
    return result;
  }
  if (milp_fits && LpFitsTime(columns, left())) {
    SolveWholeMilp(graph, budget_bytes, options, limit, std::max(5.0, 2 * patience_s), start,
                   windows.improvements > 0 ? "window search" : start_name, elapsed, result);
    if (result.message.find("no progress") != std::string::npos) reason = "no progress";
    result.message = searched + (result.message.empty() ? "" : "; " + result.message);
    if (!result.schedule && result.status != SolveStatus::kInfeasible) {
      FinishWithStart(start, SolveStatus::kFeasible, options, result);
    }
    return result;
  }
  result.message = fmt::format("{}; whole MILP skipped: about {} columns, too many for the "
                               "{:.0f} s left",
                               searched, columns, std::max(0.0, left()));
  FinishWithStart(start, SolveStatus::kFeasible, options, result);
  return result;
}

}  // namespace

OptimizerResult SolveOptimal(const Graph& graph, int64_t budget_bytes,
                             const OptimalOptions& options) {
  std::string reason = "time limit";
  OptimizerResult result = SearchOptimal(graph, budget_bytes, options, reason);
  if (result.status == SolveStatus::kInfeasible) {
    result.stop_reason = "infeasible";
  } else if (CancelRequested()) {
    result.stop_reason = "cancelled";
  } else if (result.schedule &&
             WithinGap(result.schedule->cost, result.lower_bound, kProvenGap)) {
    result.stop_reason = "proven optimal";  // what a row's verdict calls optimal
  } else if (result.schedule &&
             (result.status == SolveStatus::kOptimal ||
              WithinGap(result.schedule->cost, result.lower_bound, options.mip.relative_gap))) {
    result.stop_reason = "gap target reached";
  } else {
    result.stop_reason = reason;
  }
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
