// The optimal recomputation R for a fixed checkpoint matrix S (docs/design.md §3, "R from S").
#pragma once

#include "core/stage_matrix.h"
#include "core/graph.h"
#include "core/schedule.h"

namespace remat {

// Returns {R, S} where R is the cheapest recomputation that makes S correct: the frontier
// node of each stage, every value that S starts holding in the next stage, and recursively
// every missing input of a computed node. S must hold nothing at or ahead of the frontier
// (S[t][i] = 0 for i >= t); throws InternalError otherwise.
Schedule ScheduleFromCheckpoints(const Graph& graph, StageMatrix S);

}  // namespace remat
