// Checkpoint-all (docs/design.md §6): keep every forward output.
#include "strategies/checkpoint_all.h"

#include "strategies/checkpoints.h"

namespace remat {

StrategyResult CheckpointAll(const Graph& graph, int64_t budget_bytes) {
  const std::vector<bool> keep(graph.size(), true);
  return EvaluateSchedule(graph, "checkpoint-all", ScheduleKeeping(graph, keep), budget_bytes,
                          "every value kept until its last use");
}

}  // namespace remat
