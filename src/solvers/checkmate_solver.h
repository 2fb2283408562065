// The optimal strategy (MILP on CBC) and the LP lower bound (CLP), each returning a schedule
// that has been decoded from S, completed by the R-from-S rule and re-simulated.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "core/evaluated_schedule.h"
#include "core/graph.h"
#include "solvers/checkmate_model.h"
#include "solvers/solver_types.h"

namespace remat {

struct OptimizerResult {
  std::string strategy;
  SolveStatus status = SolveStatus::kError;
  std::optional<StrategyResult> schedule;  // present when the solver found a solution
  double lower_bound = 0;   // proven lower bound on the cost (graph units); 0 if none
  double solve_time_s = 0;
  ModelSize full_size;      // the plain paper formulation
  ModelSize size;           // as solved, after reductions
  std::string start;        // the baseline used as MIP start, if any
  std::string message;
  // Why the search ended, in words (optimal only): "proven optimal", "gap target reached",
  // "no improving window", "no progress", "time limit", "cost cap decided", "infeasible",
  // "cancelled"; StopReasonName lists them.
  std::string stop_reason;
  // (cost - lower bound) / cost of the schedule; NaN when there is no schedule.
  double gap() const;
};

// Where `optimal` stands, in graph cost units (the units of the final table).
struct OptimalProgress {
  std::string phase;        // "window search" or "MILP"
  double elapsed_s = 0;     // since the call began
  double cost = std::numeric_limits<double>::infinity();   // the incumbent's cost
  double bound = 0;         // the best proven lower bound
  std::string detail;       // e.g. "14 windows tried, 3 improved the schedule", "2310 nodes"
};

struct OptimalOptions {
  MipOptions mip;           // mip.progress is not used: see `progress`
  CheckmateModelOptions model;
  bool mip_start = true;    // seed CBC with the best heuristic schedule (BestHeuristic)
  // A BestHeuristic result for the same graph and budget, computed earlier (used as is).
  std::optional<StrategyResult> heuristic;
  // Another schedule for the same graph and budget (say an earlier strategy's): the start
  // instead of the heuristic's when it is better (IsBetter).
  std::optional<StrategyResult> candidate_start;
  // A valid lower bound for the same graph and budget, computed earlier: reported when the
  // MILP is skipped (instead of computing the absence-gap bound again) and kept when higher
  // than CBC's.
  std::optional<double> known_lower_bound;
  // The decision question "is there a schedule costing at most this?" (maxbatch's overhead
  // cap): the pipeline stops as soon as a fitting schedule within it is found, or a bound above
  // it is proven, instead of spending the rest of the time on the cost.
  std::optional<double> decide_at_cost;
  // Seconds without an improving window (twice that without progress in the whole MILP that
  // follows the window search) after which the search ends; 0: automatic, the larger of 1 s
  // and half the time spent before the search (the start and the bound, time_before_s
  // included). A small model solved by the whole MILP at once is never cut short: its proof
  // is the point.
  double patience_s = 0;
  // Time the caller spent on this search's behalf before the call (its start, its bound).
  double time_before_s = 0;
  // Round the LP relaxation for another start when its model fits a quarter of the time.
  bool rounding_start = true;
  // Called about once a second during the MILP and after every window.
  std::function<void(const OptimalProgress&)> progress;
};

// Minimum-cost schedule within `budget_bytes`, as a pipeline (docs/solvers.md, "optimal"): the
// best heuristic schedule as the start, then either the whole MILP at once (small models) or
// the window search, followed by the whole MILP seeded with its result when that can still be
// built and solved in the time left. mip.time_limit_s bounds the whole call. The status is
// `optimal` only when proven (by CBC, or by a bound equal to the cost), else `feasible` with
// the best proven bound. Throws InternalError if a decoded solution simulates over the budget
// (a bug, never a result).
OptimizerResult SolveOptimal(const Graph& graph, int64_t budget_bytes,
                             const OptimalOptions& options = {});

// The LP relaxation's optimum at the full budget: a lower bound on every schedule's cost.
struct LowerBound {
  SolveStatus status = SolveStatus::kError;
  double cost = 0;  // graph units; valid when status is kOptimal
  double solve_time_s = 0;
  std::string message;
};
LowerBound LpLowerBound(const Graph& graph, int64_t budget_bytes, const LpOptions& options = {});

// Decodes S from solver values, rebuilds R, simulates and checks the budget.
StrategyResult DecodeSchedule(const Graph& graph, const CheckmateModel& model,
                              const std::vector<double>& values, double threshold,
                              int64_t budget_bytes, const std::string& strategy,
                              const std::string& parameters);

}  // namespace remat
