// Planning one graph at one budget: the no-remat reference, the budget, the minimum peak, the
// best lower bound and one row per strategy, each with its gap to that one bound. `remat
// solve`, remat-run's planning and Python's `remat.plan` all go through PlanAtBudget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "planning/budget.h"
#include "planning/min_budget.h"
#include "planning/strategy_runner.h"
#include "planning/verdict.h"
#include "solvers/lower_bound.h"

namespace remat {

struct PlanRequest {
  std::vector<std::string> strategies;  // names of StrategyNames(), run in this order
  SolverSettings settings;
  bool lower_bound = true;  // compute the best bound (absence-gap and LP) before the strategies
  // When positive, the bound and every strategy together finish within this many seconds
  // (Python's time_limit_s): the bound gets at most half of it, each strategy at most what is
  // left, and a strategy reached after it is spent is skipped. 0: settings.time_limit_s per
  // run, as `remat solve --time-limit` does.
  double total_time_limit_s = 0;
  // Schedules known for the graph (name, schedule): torch's own partitions of a compiled
  // region. Re-simulated at the budget, the best fitting one is a start for local-search and
  // optimal and optimal's floor, as if a strategy had found it.
  std::vector<std::pair<std::string, Schedule>> starts;
};

// The schedule without rematerialization: every node once, every output kept.
struct NoRematReference {
  double cost = 0;           // the sum of all node costs
  int64_t peak_bytes = 0;    // its simulated peak
};
NoRematReference NoRemat(const Graph& graph);

// The best of `bound` and the bounds optimal proved in `rows` (its own_bound).
std::optional<double> BestOfBounds(const std::optional<double>& bound,
                                   const std::vector<StrategyRow>& rows);

struct PlanReport {
  Budget budget;
  NoRematReference no_remat;
  int64_t min_peak_bytes = 0;  // MinimumPeakLowerBound: no schedule peaks lower
  // The best bound on every schedule's cost within the budget: BestLowerBound's, raised to
  // optimal's own when that is higher (source "optimal's solver"); nullopt when neither exists. Its
  // status kInfeasible proves that no schedule fits.
  std::optional<BestBound> bound;
  double relative_gap = kDefaultRelativeGap;  // the tolerance within which a cost meeting the bound is optimal
  std::vector<StrategyRow> rows;  // in the order asked
  // With the budget "min": the smallest budget found, its schedule and the bound on it; the
  // budget is then that smallest peak, and its schedule was offered to optimal.
  std::optional<MinBudget> min_budget;

  // The bound's cost when one was proven (not when the budget was shown infeasible).
  std::optional<double> lower_bound() const;
  // RelativeGap of a fitting row to lower_bound(); nullopt without both or at cost 0.
  std::optional<double> Gap(const StrategyRow& row) const;
  bool any_fits() const;
  // The cheapest fitting row (ties: the first asked), or nullptr when none fits.
  const StrategyRow* Best() const;
  bool below_minimum_peak() const { return budget.activation_bytes < min_peak_bytes; }
  RowVerdict Verdict(const StrategyRow& row) const {
    return VerdictOf(row, lower_bound(), relative_gap);
  }
  // The smallest peak of the schedules found, fitting or not: the smallest budget for which a
  // strategy found a schedule. nullopt when none found one.
  std::optional<int64_t> SmallestPeakFound() const;
};

// Plans `graph` at `budget` (already resolved) with every strategy of `request`. The roundings
// share one LP; `optimal` runs last, starts from the best schedule found before it (or
// local-search's) and reuses the bound.
PlanReport PlanAtBudget(const Graph& graph, const Budget& budget, const PlanRequest& request);

// The same, resolving `budget` first (percentages are of the no-remat peak). A budget text of
// "min" (IsMinBudget) first searches the smallest budget (FindMinimumBudget, with at most half
// of a total time limit, else the per-run limit) and plans at it.
PlanReport PlanAtBudget(const Graph& graph, const BudgetRequest& budget,
                        const PlanRequest& request);

// True for the budget text that asks for the smallest budget: "min".
bool IsMinBudget(const std::string& budget_text);

// RelativeGap of a fitting row to `bound`; nullopt without both or at cost 0.
std::optional<double> GapToBound(const StrategyRow& row, const std::optional<double>& bound);

}  // namespace remat
