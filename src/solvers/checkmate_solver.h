// The optimal strategy (MILP on CBC) and the LP lower bound (CLP), each returning a schedule
// that has been decoded from S, completed by the R-from-S rule and re-simulated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/graph.h"
#include "solvers/checkmate_model.h"
#include "solvers/solver_types.h"
#include "strategies/strategy.h"

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
  // (cost - lower bound) / cost of the schedule; NaN when there is no schedule.
  double gap() const;
};

struct OptimalOptions {
  MipOptions mip;
  CheckmateModelOptions model;
  bool mip_start = true;    // seed CBC with the best heuristic schedule (BestHeuristic)
  // A BestHeuristic result for the same graph and budget, computed earlier (used as is).
  std::optional<StrategyResult> heuristic;
  // A valid lower bound for the same graph and budget, computed earlier: reported when the
  // MILP is skipped (instead of computing the absence-gap bound again) and kept when higher
  // than CBC's.
  std::optional<double> known_lower_bound;
};

// Minimum-cost schedule within `budget_bytes`. mip.time_limit_s bounds the whole call (the
// start, model building and CBC). When the model is too large for that time (LpFitsTime), the
// MILP is skipped and the start comes back as `feasible` with the absence-gap bound. Throws InternalError if a decoded solution
// simulates over the budget (a bug, never a result).
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
