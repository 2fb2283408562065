// One budget's work, shared by the plan (remat solve, Python's plan) and the sweep: the
// strategies other than optimal, then the best lower bound (told the cost it must prove), then
// optimal from the best schedule found and with that bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "planning/strategy_runner.h"
#include "planning/time_left.h"
#include "planning/work_progress.h"
#include "solvers/lower_bound.h"

namespace remat {

struct BudgetPointRequest {
  std::vector<std::string> strategies;  // names of StrategyNames(); rows come in this order
  SolverSettings settings;
  bool lower_bound = true;  // compute the best bound (absence-gap and LP)
  double bound_share = 1.0;  // the bound gets at most this share of the total time left
  std::string spent_note = "skipped: the total time limit is spent";
  const WorkProgress* progress = nullptr;  // Start/Finish around each step when given
  std::string where;  // appended to the progress text, e.g. "at 1.00 GiB (budget 2/5)"
  // A schedule known to fit this budget (say the smallest budget's own): the bound's target
  // and optimal's floor, as if a strategy had found it.
  std::optional<StrategyResult> known;
};

struct BudgetPointResult {
  std::optional<BestBound> bound;  // when asked for and computed
  bool bound_skipped = false;      // asked for, but the total time was spent
  std::vector<StrategyRow> rows;   // in the order asked
};

// The strategies run in RunOrder (optimal last). The bound comes after every other strategy:
// once one of them holds a schedule within the budget, the bound stops as soon as it proves
// that schedule within the gap target. When optimal is asked for, its start (local-search) is
// computed before the bound for the same reason. `total` bounds everything together.
BudgetPointResult PlanOneBudget(const Graph& graph, int64_t budget_bytes,
                                const BudgetPointRequest& request, const TimeLeft& total);

}  // namespace remat
