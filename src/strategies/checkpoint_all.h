// The no-rematerialization schedule: every value is kept until its last consumer.
#pragma once

#include <cstdint>

#include "core/evaluated_schedule.h"
#include "core/graph.h"

namespace remat {

// Works on any DAG, labeled or not; its cost is the sum of all node costs.
StrategyResult CheckpointAll(const Graph& graph, int64_t budget_bytes);

}  // namespace remat
