// Candidate checkpoints of Chen's methods: every forward node (linearized) or only the
// articulation points of the forward graph (AP).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"

namespace remat {

// Forward nodes that are articulation points of the undirected forward graph augmented with a
// virtual source joined to every forward node without forward inputs and a virtual sink joined
// to every forward node without forward consumers. The augmentation makes the two ends of a
// chain cut vertices too, so in a chain every node is a candidate. Increasing ids.
std::vector<int32_t> ForwardArticulationPoints(const Graph& graph);

}  // namespace remat
