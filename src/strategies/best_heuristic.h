// The best schedule the heuristics find without a solver: every applicable baseline, the
// cheapest baseline over the budget made to fit by eviction from its holds (when no fitting
// one is as cheap) and the eviction heuristic, then local improvement of the cheapest fitting
// one. It is the start
// that `optimal` hands to CBC and the answer when no solver fits in the time.
#pragma once

#include <cstdint>
#include <optional>

#include "core/evaluated_schedule.h"
#include "core/graph.h"

namespace remat {

struct BestHeuristicOptions {
  double time_limit_s = 60;  // the whole call: baselines, eviction and local search
  // An `evict` result for the same graph and budget, computed earlier: it is used instead of
  // running the eviction heuristic again.
  std::optional<StrategyResult> evicted;
  // A schedule known for the same graph and budget (a caller's: torch's own partition): a
  // start like the baselines'.
  std::optional<StrategyResult> known;
};

// Strategy name "local-search"; its parameters name the schedule it started from. When nothing
// fits, the result is the smallest-peak schedule found (status over budget).
StrategyResult BestHeuristic(const Graph& graph, int64_t budget_bytes,
                             const BestHeuristicOptions& options = {});

}  // namespace remat
