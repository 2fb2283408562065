// A memory-aware eviction heuristic for any DAG (the idea of DTR, decided ahead of time):
// start from keeping every value until its last use; while some stage exceeds the budget,
// stop holding, across the fullest stage, the value with the best eviction score, to be
// recomputed at its next use from inputs that are kept there. It decides S only; R follows
// from the R-from-S rule and every step is re-simulated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/evaluated_schedule.h"
#include "core/graph.h"

namespace remat {

// Which held value to give up first at the fullest stage: the one with the smallest score.
// "Bytes" are the bytes the eviction removes from that stage: the value's own, less any
// input that must now be held longer for its recomputation.
enum class EvictionScore {
  kDtr,          // cost / (bytes * stages until its next use)
  kCostPerByte,  // cost / bytes
  kFarthestUse,  // the value read last (Belady), larger first on ties
  kLargest,      // the value that frees the most bytes
};

const char* EvictionScoreName(EvictionScore score);
const std::vector<EvictionScore>& AllEvictionScores();

struct EvictionOptions {
  double time_limit_s = 60;  // the whole call; the best result so far is returned at the limit
};

// One pass with one rule. An input of the evicted value that is not held where the value is
// recomputed is held there from its last presence, or, when that hold would cover the peak
// and `depth` allows, recomputed with the value (so are its inputs, up to `depth` levels); with
// depth > 0 both variants are candidates. The rule ranks the candidates at the peak; the best
// few are simulated and the one that removes the most overflow (summed over stages) per unit
// of added cost is applied. Evicts until the simulated peak is at most `budget_bytes` or no
// eviction helps the fullest stage (the result is then over budget) or time runs out.
StrategyResult EvictOnce(const Graph& graph, int64_t budget_bytes, EvictionScore score,
                         int32_t depth, const EvictionOptions& options = {});

// The best pass over every rule at depth 3: the cheapest fitting result, or the smallest peak when none
// fits. Strategy name "evict".
StrategyResult Evict(const Graph& graph, int64_t budget_bytes, const EvictionOptions& options = {});

// The same passes from the holds of `start` (its S; R follows from it) instead of from keeping
// everything: a known schedule over the budget (torch's partition of a compiled region) made
// to fit by evicting from it. Strategy name "evict".
StrategyResult EvictFrom(const Graph& graph, int64_t budget_bytes, const Schedule& start,
                         const EvictionOptions& options = {});

}  // namespace remat
