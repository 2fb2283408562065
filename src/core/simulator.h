// The simulator: runs an operation list on a memory counter and is the single source of truth
// for every reported cost and peak.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "core/plan.h"
#include "core/schedule.h"

namespace remat {

struct SimulationResult {
  double cost = 0;                            // sum of the costs of all evaluations
  // Largest live bytes at any compute: its output, its inputs and everything else allocated,
  // plus the node's workspace_bytes (docs/design.md §3).
  int64_t peak_bytes = 0;
  int64_t evaluations = 0;                    // number of compute operations
  std::vector<int32_t> evaluations_per_node;  // how often each node is computed (>= 1)
  // One entry per operation of the plan: live bytes after it, and for a compute the bytes
  // during it (its workspace included).
  std::vector<int64_t> live_bytes_after_op;
  std::vector<int64_t> stage_peak_bytes;      // per stage: max bytes during the stage
  int64_t live_bytes_at_end = 0;              // bytes still allocated after the last operation
};

// Executes `plan` step by step. Throws InternalError, naming the operation, stage and node,
// when the plan reads a value that is not live, allocates a live value, frees a dead one,
// goes back in stages or never computes some node.
SimulationResult Simulate(const Graph& graph, const Plan& plan);

// BuildPlan followed by Simulate.
SimulationResult Simulate(const Graph& graph, const Schedule& schedule);

}  // namespace remat
