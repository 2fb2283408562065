// Seeded random layered DAGs (unlabeled), the synthetic graphs of the rematerialization
// literature, for tests and benchmarks at sizes the zoo does not reach.
#pragma once

#include <cstdint>

#include "core/graph.h"

namespace remat {

struct RandomLayeredOptions {
  int32_t nodes = 1000;
  int32_t width = 10;         // nodes per layer (the last layer may be narrower)
  int64_t edges = 6000;       // expected number of edges (at least one input per non-source)
  int32_t span = 3;           // an edge reaches back at most this many layers
  uint64_t seed = 1;
  int32_t min_cost = 1;       // node cost: uniform integer in [min_cost, max_cost] (unit "unit")
  int32_t max_cost = 100;
  int64_t min_bytes = 1 << 20;    // output bytes: uniform integer in [1, 64] MiB by default,
  int64_t max_bytes = 64 << 20;   // drawn in whole multiples of min_bytes
};

// Node v of layer L >= 1 reads one uniformly drawn node of layer L-1 (so every non-source
// node has an input) and each other node of layers L-span..L-1 independently with the
// probability that makes the expected edge count `edges`. Nodes are numbered layer by layer,
// so ids are a topological order. Throws UsageError for inconsistent options. The same options
// give the same graph on every platform (a SplitMix64 stream, no std distributions).
Graph RandomLayeredGraph(const RandomLayeredOptions& options);

}  // namespace remat
