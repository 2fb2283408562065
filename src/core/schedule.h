// A staged schedule: T = n stages, R[t][i] = node i is (re)computed in stage t, S[t][i] = the
// output of i is held from stage t-1 into stage t (docs/design.md §3).
#pragma once

#include <string>
#include <vector>

#include "core/stage_matrix.h"
#include "core/graph.h"

namespace remat {

struct Schedule {
  StageMatrix R;
  StageMatrix S;

  int32_t stages() const { return R.rows(); }
  bool operator==(const Schedule&) const = default;
};

// An empty n-stage schedule for an n-node graph (all zeros).
Schedule EmptySchedule(const Graph& graph);

// Violations of frontier-advancing and correctness (docs/design.md §3), each naming the stage and the
// node, at most `max_messages` of them. An empty result means the schedule is valid.
std::vector<std::string> CheckSchedule(const Graph& graph, const Schedule& schedule,
                                       size_t max_messages = 20);

}  // namespace remat
