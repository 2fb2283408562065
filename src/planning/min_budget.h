// The smallest budget (issue 26, item 3): the least peak of any schedule remat finds, that
// schedule, and a certified lower bound on the least peak of every schedule, with the gap
// between them. `remat solve --budget min` and Python's budget="min" plan at it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/evaluated_schedule.h"
#include "core/graph.h"
#include "planning/peak_lower_bounds.h"

namespace remat {

struct MinBudgetOptions {
  double time_limit_s = 60;  // the whole search, the bound included
  int32_t threads = 1;
};

struct MinBudget {
  StrategyResult schedule;      // the least-peak schedule found (fits at its own peak)
  int64_t peak_bytes = 0;       // its peak: the smallest budget found
  // No schedule peaks below this: MinimumPeakLowerBound, or one byte above the largest budget at
  // which the Checkmate LP relaxation is infeasible (a relaxation of every schedule).
  int64_t lower_bound_bytes = 0;
  std::string bound_source;     // "a node and its inputs" or "LP relaxation infeasible at N B"
  std::string found_by;         // how the schedule was found, in words
  std::string note;             // what each phase did
  double seconds = 0;
  // (peak - lower bound) / peak: 0 when the least peak is proven.
  double gap() const;
};

// Searches low-peak schedules three ways within the time limit: eviction and local-search
// bisected over budgets (every schedule counts by its own peak, fitting or not), then the
// window repair on the elastic model at budgets below the best peak, while the LP relaxation
// is bisected for the bound when its model fits the time. Always returns a schedule (no
// rematerialization at worst).
MinBudget FindMinimumBudget(const Graph& graph, const MinBudgetOptions& options = {});

}  // namespace remat
