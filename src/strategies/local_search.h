// Local improvement of any schedule by moves that the simulator checks: hold a value across a
// gap instead of recomputing it, and give up a cheap hold to make room for a dearer one.
#pragma once

#include <cstdint>
#include <string>

#include "core/evaluated_schedule.h"
#include "core/graph.h"

namespace remat {

struct LocalSearchOptions {
  double time_limit_s = 10;  // wall-clock seconds for the whole search
};

// Starts from `start` (which must fit `budget_bytes`; returned unchanged otherwise) and applies
// improving moves until none is left or time runs out. Every accepted move is re-simulated: the
// result fits and costs no more than the start. The result keeps the start's strategy name and
// reports the moves in its parameters.
StrategyResult ImproveSchedule(const Graph& graph, int64_t budget_bytes, StrategyResult start,
                               const LocalSearchOptions& options = {});

}  // namespace remat
