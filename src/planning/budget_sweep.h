// Running strategies over a range of activation budgets: the core of `remat sweep`,
// `remat approx-report` and Python's `remat.sweep`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "planning/strategy_runner.h"
#include "planning/work_progress.h"

namespace remat {

// A range of budgets as a user states it. Each end is bytes, units or a percentage of the
// no-remat peak; empty means the default.
struct BudgetRange {
  std::string from_text;  // default: the graph's minimum-peak lower bound
  std::string to_text;    // default: the no-remat peak
  int32_t points = 10;
  std::string from_name = "--from";  // how messages name the ends
  std::string to_name = "--to";
};

// `points` budgets from `from_bytes` to `to_bytes`, both included, evenly spaced and rounded
// down to whole bytes; equal budgets (a range narrower than the points) appear once.
std::vector<int64_t> BudgetGrid(int64_t from_bytes, int64_t to_bytes, int32_t points);

// The grid for `range` on `graph`; percentages are of `no_remat_peak_bytes`. UsageError when
// the range is empty (from above to) or a size is malformed.
std::vector<int64_t> ResolveBudgetGrid(const BudgetRange& range, const Graph& graph,
                                       int64_t no_remat_peak_bytes);

// Everything measured at one budget.
struct SweepPoint {
  int64_t budget_bytes = 0;
  // The best valid bound (absence-gap or LP, or optimal's own when higher), when found.
  std::optional<double> lower_bound;
  // SolveStatusName, "skipped", or "optimal's own" when the only bound is optimal's.
  std::string lower_bound_status;
  std::string lower_bound_source;     // BestBound::source ("LP relaxation", ...) when found
  double lower_bound_seconds = 0;
  std::vector<StrategyRow> rows;      // one per strategy, in the order asked
};

// For each budget: the best lower bound (unless `lower_bound` is false), then every strategy.
// `progress` counts one item per bound and per strategy run. With `total_time_limit_s` > 0 no
// run gets more than what is left of it, and once it is spent the remaining rows are
// "skipped" (solver status) without a schedule.
std::vector<SweepPoint> RunBudgetSweep(const Graph& graph, const std::vector<int64_t>& budgets,
                                       const std::vector<std::string>& strategies,
                                       const SolverSettings& settings, bool lower_bound,
                                       const WorkProgress& progress = {},
                                       double total_time_limit_s = 0);

// Items RunBudgetSweep reports to its progress hooks.
int64_t SweepWorkItems(size_t budgets, size_t strategies, bool lower_bound);

}  // namespace remat
