// Chen et al. (2016) checkpointing: sqrt(n) segments and the greedy segment-budget sweep,
// each over all forward nodes (linearized) or only articulation points (AP).
#pragma once

#include <cstdint>

#include "core/evaluated_schedule.h"
#include "core/graph.h"

namespace remat {

enum class CandidateSet { kLinearized, kArticulationPoints };

// With c candidate checkpoints in topological order, segments of k = floor(sqrt(c)) candidates:
// the k-th, 2k-th, ... candidates are kept. Does not look at the budget except to report fit.
StrategyResult ChenSqrtN(const Graph& graph, int64_t budget_bytes, CandidateSet candidates);

// Chen's greedy rule for a segment budget b: walk the forward nodes accumulating output bytes
// and keep a candidate once the running total exceeds b, then restart the total. b is swept
// over a geometric grid from the smallest forward output to the sum of all of them; the
// cheapest schedule whose simulated peak fits `budget_bytes` is returned (else the lowest peak).
StrategyResult ChenGreedy(const Graph& graph, int64_t budget_bytes, CandidateSet candidates);

// Keeps for the greedy rule with segment budget `segment_bytes` (exposed for tests).
std::vector<bool> ChenGreedyCheckpoints(const Graph& graph, double segment_bytes,
                                        CandidateSet candidates);

}  // namespace remat
