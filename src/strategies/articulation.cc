// Articulation points by an iterative depth-first search with low-link values (Tarjan).
#include "strategies/articulation.h"

#include <algorithm>

#include "core/errors.h"

namespace remat {

std::vector<int32_t> ForwardArticulationPoints(const Graph& graph) {
  RequireTrainingStructure(graph, "articulation points");
  const std::vector<int32_t> forward = graph.forward_nodes();
  const int32_t f = static_cast<int32_t>(forward.size());  // forward ids are 0..f-1
  const int32_t source = f;
  const int32_t sink = f + 1;
  std::vector<std::vector<int32_t>> adjacent(f + 2);
  auto join = [&](int32_t a, int32_t b) {
    adjacent[a].push_back(b);
    adjacent[b].push_back(a);
  };
  for (int32_t v : forward) {
    bool has_input = false;
    bool has_consumer = false;
    for (int32_t u : graph.preds(v)) {
      if (graph.node(u).kind == NodeKind::kForward) {
        join(u, v);
        has_input = true;
      }
    }
    for (int32_t w : graph.succs(v)) has_consumer |= graph.node(w).kind == NodeKind::kForward;
    if (!has_input) join(source, v);
    if (!has_consumer) join(v, sink);
  }
  const int32_t size = f + 2;
  std::vector<int32_t> order(size, -1);
  std::vector<int32_t> low(size, 0);
  std::vector<bool> cut(size, false);
  int32_t counter = 0;
  // Iterative DFS from the virtual source: frames of (vertex, parent, next neighbour index).
  struct Frame {
    int32_t vertex;
    int32_t parent;
    size_t next;
  };
  int32_t root_children = 0;
  std::vector<Frame> stack{{source, -1, 0}};
  order[source] = low[source] = counter++;
  while (!stack.empty()) {
    Frame& frame = stack.back();
    const int32_t v = frame.vertex;
    if (frame.next < adjacent[v].size()) {
      const int32_t w = adjacent[v][frame.next++];
      if (order[w] < 0) {
        order[w] = low[w] = counter++;
        if (v == source) ++root_children;
        stack.push_back({w, v, 0});
      } else if (w != frame.parent) {
        low[v] = std::min(low[v], order[w]);
      }
      continue;
    }
    const int32_t parent = frame.parent;
    stack.pop_back();
    if (parent >= 0) {
      low[parent] = std::min(low[parent], low[v]);
      if (parent != source && low[v] >= order[parent]) cut[parent] = true;
    }
  }
  std::vector<int32_t> points;
  for (int32_t v : forward) {
    if (cut[v]) points.push_back(v);
  }
  return points;
}

}  // namespace remat
