// Seeded random forward DAGs and training graphs for property tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

#include <fmt/format.h>

#include "core/training_graph.h"

namespace remat::testing {

// A forward DAG of `layers` nodes: each node reads its predecessor in topological order (so
// the graph is connected) plus, with probability `skip_probability`, one random earlier node.
inline ForwardGraph RandomForwardGraph(uint32_t seed, int32_t layers,
                                       double skip_probability = 0.3) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> bytes(1, 100);
  std::uniform_int_distribution<int> cost(1, 10);
  std::bernoulli_distribution skip(skip_probability);
  ForwardGraph forward;
  forward.name = fmt::format("random(seed={}, layers={})", seed, layers);
  for (int32_t i = 0; i < layers; ++i) {
    forward.nodes.push_back(
        {.name = fmt::format("f{}", i), .cost = static_cast<double>(cost(rng)), .bytes = bytes(rng)});
    if (i > 0) forward.edges.push_back({i - 1, i});
    if (i > 1 && skip(rng)) {
      std::uniform_int_distribution<int32_t> source(0, i - 2);
      forward.edges.push_back({source(rng), i});
    }
  }
  forward.loss_bytes = 1;
  return forward;
}

inline Graph RandomTrainingGraph(uint32_t seed, int32_t layers) {
  return BuildTrainingGraph(RandomForwardGraph(seed, layers));
}

// `graph` with module structure on its forward nodes, so that every baseline applies: the
// first and last forward nodes outside blocks, the rest in `blocks` blocks of consecutive
// nodes, and every third forward node a contraction.
inline Graph WithModuleStructure(const Graph& graph, int32_t blocks = 3) {
  std::vector<Node> nodes = graph.nodes();
  const int32_t f = static_cast<int32_t>(graph.forward_nodes().size());
  for (int32_t v = 0; v < f; ++v) {
    if (v > 0 && v + 1 < f) nodes[v].block = fmt::format("b{}", (v - 1) * blocks / (f - 1));
    nodes[v].contraction = v % 3 == 1;
  }
  return Graph(std::move(nodes), graph.edges(), graph.cost_unit(), graph.name());
}

// An unlabeled DAG of n nodes with random edges u -> v (u < v) of probability `density`.
inline Graph RandomUnlabeledDag(uint32_t seed, int32_t n, double density = 0.4) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> bytes(1, 20);
  std::uniform_int_distribution<int> cost(0, 5);
  std::bernoulli_distribution edge(density);
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  for (int32_t v = 0; v < n; ++v) {
    nodes.push_back({.name = fmt::format("n{}", v), .cost = static_cast<double>(cost(rng)),
                     .bytes = bytes(rng)});
    for (int32_t u = 0; u < v; ++u) {
      if (edge(rng)) edges.push_back({u, v});
    }
  }
  return Graph(std::move(nodes), std::move(edges));
}

// The graph with a random workspace in [0, max_bytes] on each node (about half of them 0).
inline Graph WithRandomWorkspace(const Graph& graph, uint32_t seed, int64_t max_bytes) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> workspace(-max_bytes, max_bytes);
  std::vector<Node> nodes = graph.nodes();
  for (Node& node : nodes) node.workspace_bytes = std::max<int64_t>(0, workspace(rng));
  return Graph(std::move(nodes), graph.edges(), graph.cost_unit(), graph.name());
}

}  // namespace remat::testing
