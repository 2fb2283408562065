// Times every node of a training graph on libtorch: the measured costs remat plans with.
#pragma once

#include <cstdint>
#include <string>

#include "core/cost_profile.h"
#include "core/graph.h"
#include "exec/network.h"

namespace remat::exec {

struct ProfileOptions {
  int32_t warmup = 2;   // untimed evaluations per node
  int32_t repeats = 5;  // timed evaluations per node; the median is kept
  int32_t threads = 1;  // at::set_num_threads for the whole profile
};

// Computes every node once in order (all values kept), then times each node alone from those
// values: `warmup` untimed and `repeats` timed evaluations, median in milliseconds. A backward
// node's time includes its parameter-gradient kernels and its transient recomputations
// (max-pool indices, dropout masks). Each node's workspace_bytes is the most memory the
// counting allocator saw allocated during a timed evaluation above what was live before it and
// the node's output (kernel scratch, gradient temporaries).
CostProfile ProfileGraph(Network& network, const Graph& graph, const ProfileOptions& options);

}  // namespace remat::exec
