// Forward-to-training graph rule (docs/design.md §1) and the linear benchmark graph.
#include "core/training_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "core/errors.h"

namespace remat {
namespace {

// Product-rule edges (docs/design.md §1): the VJP of a product of activations for one factor
// reads the others, so for a flagged node i and distinct inputs j != k of i, bwd(j) reads k.
// Without the edge, bwd(j) would have no way to the other factor (attention's grad @ V^T).
template <typename Bwd>
void AddInputProductEdges(const ForwardGraph& forward, Bwd bwd, std::vector<Edge>& edges) {
  const int32_t f = static_cast<int32_t>(forward.nodes.size());
  std::vector<std::vector<int32_t>> inputs(f);
  for (const Edge& e : forward.edges) inputs[e.dst].push_back(e.src);
  std::set<std::pair<int32_t, int32_t>> present;
  for (const Edge& e : edges) present.insert({e.src, e.dst});
  for (int32_t i = 0; i < f; ++i) {
    if (!forward.nodes[i].backward_reads_inputs) continue;
    std::vector<int32_t>& in = inputs[i];
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    for (int32_t j : in) {
      for (int32_t k : in) {
        if (k == j || !present.insert({k, bwd(j)}).second) continue;
        edges.push_back({k, bwd(j)});
      }
    }
  }
}

}  // namespace

Graph BuildTrainingGraph(const ForwardGraph& forward) {
  const int32_t f = static_cast<int32_t>(forward.nodes.size());
  if (f == 0) throw InputError("the forward graph has no nodes");
  {
    // Validate the forward DAG on its own ids so messages name forward nodes.
    std::vector<Node> check(f);
    for (int32_t i = 0; i < f; ++i) {
      const ForwardNode& fn = forward.nodes[i];
      check[i] = {.name = fn.name, .cost = fn.cost, .bytes = fn.bytes};
      if (fn.backward_cost && !(*fn.backward_cost >= 0)) {
        throw InputError(fmt::format("forward node {} ('{}'): backward cost must be >= 0, got {}",
                                     i, fn.name, *fn.backward_cost));
      }
    }
    Graph(std::move(check), forward.edges, forward.cost_unit, forward.name);
  }
  if (forward.loss_bytes < 0 || forward.loss_cost < 0) {
    throw InputError("the loss node's bytes and cost must be >= 0");
  }
  auto bwd = [f](int32_t i) { return 2 * f - i; };
  std::vector<Node> nodes(2 * f + 1);
  for (int32_t i = 0; i < f; ++i) {
    const ForwardNode& fn = forward.nodes[i];
    nodes[i] = {.name = fn.name,
                .kind = NodeKind::kForward,
                .cost = fn.cost,
                .bytes = fn.bytes,
                .workspace_bytes = fn.workspace_bytes,
                .block = fn.block,
                .contraction = fn.contraction};
    nodes[bwd(i)] = {.name = fn.name + "_grad",
                     .kind = NodeKind::kBackward,
                     .cost = fn.backward_cost.value_or(2.0 * fn.cost),
                     .bytes = fn.bytes,
                     .workspace_bytes = fn.backward_workspace_bytes,
                     .forward_of = i};
  }
  nodes[f] = {.name = "loss", .kind = NodeKind::kLoss, .cost = forward.loss_cost,
              .bytes = forward.loss_bytes};

  std::vector<Edge> edges;
  edges.reserve(3 * forward.edges.size() + f + 2);
  for (const Edge& e : forward.edges) {
    const int32_t j = e.src;
    const int32_t i = e.dst;
    edges.push_back({j, i});
    edges.push_back({bwd(i), bwd(j)});
    edges.push_back({i, bwd(j)});
  }
  for (int32_t i = 0; i < f; ++i) edges.push_back({i, bwd(i)});
  edges.push_back({f - 1, f});
  edges.push_back({f, bwd(f - 1)});
  AddInputProductEdges(forward, bwd, edges);
  return Graph(std::move(nodes), std::move(edges), forward.cost_unit, forward.name);
}

Graph LinearGraph(int32_t n) {
  if (n < 1) throw InputError(fmt::format("linear graph needs n >= 1, got {}", n));
  std::vector<Node> nodes(2 * n + 1);
  for (int32_t i = 0; i <= 2 * n; ++i) {
    nodes[i] = {.name = fmt::format("v{}", i), .cost = 1.0, .bytes = 1};
    if (i < n) {
      nodes[i].kind = NodeKind::kForward;
    } else if (i == n) {
      nodes[i].kind = NodeKind::kLoss;
      nodes[i].name = "loss";
    } else {
      nodes[i].kind = NodeKind::kBackward;
      nodes[i].forward_of = 2 * n - i;
    }
  }
  std::vector<Edge> edges;
  for (int32_t i = 0; i < 2 * n; ++i) edges.push_back({i, i + 1});
  for (int32_t i = 0; i < n; ++i) edges.push_back({i, 2 * n - i});
  return Graph(std::move(nodes), std::move(edges), "unit", fmt::format("linear({})", n));
}

}  // namespace remat
