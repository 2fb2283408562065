// Graph construction and validation: every invariant of docs/design.md §1 is checked here once,
// so the rest of remat can rely on a valid graph.
#include "core/graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/errors.h"

namespace remat {
namespace {

std::string Describe(const std::vector<Node>& nodes, int32_t id) {
  if (nodes[id].name.empty()) return fmt::format("node {}", id);
  return fmt::format("node {} ('{}')", id, nodes[id].name);
}

void ValidateNodes(const std::vector<Node>& nodes) {
  if (nodes.empty()) throw InputError("graph has no nodes");
  // Every sum of bytes (live memory, budgets plus fixed memory) and of costs (a schedule
  // evaluates a node at most once per stage) must stay representable: checked once here.
  int64_t total_bytes = 0;
  double total_cost = 0;
  for (const Node& node : nodes) {
    for (const int64_t bytes : {node.bytes, node.workspace_bytes}) {
      if (bytes > 0 && (__builtin_add_overflow(total_bytes, bytes, &total_bytes) ||
                        total_bytes > kMaxTotalBytes)) {
        throw InputError(fmt::format("the sum of the nodes' bytes and workspace bytes exceeds "
                                     "2^62 B (at {}): sizes this large are not supported",
                                     Describe(nodes, static_cast<int32_t>(&node - nodes.data()))));
      }
    }
    if (std::isfinite(node.cost) && node.cost > 0) total_cost += node.cost;
  }
  if (total_cost > kMaxTotalCost) {
    throw InputError(fmt::format("the sum of the nodes' costs is {:g}, above {:g}: costs this "
                                 "large are not supported (rescale the cost unit)",
                                 total_cost, kMaxTotalCost));
  }
  for (int32_t id = 0; id < static_cast<int32_t>(nodes.size()); ++id) {
    const Node& node = nodes[id];
    if (!std::isfinite(node.cost) || node.cost < 0) {
      throw InputError(fmt::format("{}: cost must be a finite number >= 0, got {}",
                                   Describe(nodes, id), node.cost));
    }
    if (node.bytes < 0) {
      throw InputError(
          fmt::format("{}: bytes must be >= 0, got {}", Describe(nodes, id), node.bytes));
    }
    if (node.workspace_bytes < 0) {
      throw InputError(fmt::format("{}: workspace_bytes must be >= 0, got {}",
                                   Describe(nodes, id), node.workspace_bytes));
    }
  }
}

void ValidateEdgeEndpoints(const std::vector<Edge>& edges, int32_t n) {
  for (size_t e = 0; e < edges.size(); ++e) {
    const Edge& edge = edges[e];
    for (int32_t end : {edge.src, edge.dst}) {
      if (end < 0 || end >= n) {
        throw InputError(fmt::format("edge {} ({} -> {}): node {} does not exist (the graph has "
                                     "{} nodes, ids 0..{})",
                                     e, edge.src, edge.dst, end, n, n - 1));
      }
    }
    if (edge.src == edge.dst) {
      throw InputError(fmt::format("edge {} ({} -> {}) is a self edge", e, edge.src, edge.dst));
    }
  }
  std::vector<size_t> order(edges.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(edges[a].src, edges[a].dst) < std::pair(edges[b].src, edges[b].dst);
  });
  for (size_t k = 1; k < order.size(); ++k) {
    if (edges[order[k]] == edges[order[k - 1]]) {
      throw InputError(fmt::format("edge {} ({} -> {}) duplicates edge {}", order[k],
                                   edges[order[k]].src, edges[order[k]].dst, order[k - 1]));
    }
  }
}

// Finds a directed cycle with an iterative depth-first search; returns it as a node list.
std::vector<int32_t> FindCycle(const std::vector<std::vector<int32_t>>& succs) {
  const int32_t n = static_cast<int32_t>(succs.size());
  enum : uint8_t { kWhite, kGrey, kBlack };
  std::vector<uint8_t> color(n, kWhite);
  std::vector<int32_t> parent(n, -1);
  for (int32_t root = 0; root < n; ++root) {
    if (color[root] != kWhite) continue;
    std::vector<std::pair<int32_t, size_t>> stack{{root, 0}};
    color[root] = kGrey;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next == succs[v].size()) {
        color[v] = kBlack;
        stack.pop_back();
        continue;
      }
      const int32_t w = succs[v][next++];
      if (color[w] == kGrey) {
        std::vector<int32_t> cycle{w};
        for (int32_t u = v; u != w; u = parent[u]) cycle.push_back(u);
        cycle.push_back(w);
        std::reverse(cycle.begin() + 1, cycle.end() - 1);
        return cycle;
      }
      if (color[w] == kWhite) {
        color[w] = kGrey;
        parent[w] = v;
        stack.emplace_back(w, 0);
      }
    }
  }
  return {};
}

void ValidateOrder(const std::vector<Edge>& edges,
                   const std::vector<std::vector<int32_t>>& succs) {
  const std::vector<int32_t> cycle = FindCycle(succs);
  if (!cycle.empty()) {
    std::string path;
    for (int32_t v : cycle) path += (path.empty() ? "" : " -> ") + std::to_string(v);
    throw InputError(fmt::format("the graph has a cycle: {}", path));
  }
  for (size_t e = 0; e < edges.size(); ++e) {
    if (edges[e].src > edges[e].dst) {
      throw InputError(fmt::format(
          "node ids are not in topological order: edge {} ({} -> {}) goes from a later id to an "
          "earlier one; number the nodes so that every edge goes from a smaller id to a larger",
          e, edges[e].src, edges[e].dst));
    }
  }
}

// Checks the forward/loss/backward labels; returns the loss id for a labeled graph.
std::optional<int32_t> ValidateKinds(const std::vector<Node>& nodes) {
  const int32_t n = static_cast<int32_t>(nodes.size());
  const auto unlabeled = std::count_if(nodes.begin(), nodes.end(), [](const Node& node) {
    return node.kind == NodeKind::kUnlabeled;
  });
  for (int32_t id = 0; id < n; ++id) {
    const Node& node = nodes[id];
    if ((!node.block.empty() || node.contraction) && node.kind != NodeKind::kForward) {
      throw InputError(fmt::format("{} is a {} node but declares {}; only forward nodes have "
                                   "module structure",
                                   Describe(nodes, id), NodeKindName(node.kind),
                                   node.block.empty() ? "contraction"
                                                      : fmt::format("block '{}'", node.block)));
    }
    if (node.forward_of == -1) continue;
    if (node.kind != NodeKind::kBackward) {
      throw InputError(fmt::format("{} is a {} node but declares a forward twin ({}); only "
                                   "backward nodes have one",
                                   Describe(nodes, id), NodeKindName(node.kind), node.forward_of));
    }
    if (node.forward_of < 0 || node.forward_of >= n) {
      throw InputError(fmt::format("{} declares forward twin {}, which does not exist",
                                   Describe(nodes, id), node.forward_of));
    }
    if (nodes[node.forward_of].kind != NodeKind::kForward) {
      throw InputError(fmt::format("{} declares forward twin {}, which is a {} node, not forward",
                                   Describe(nodes, id), node.forward_of,
                                   NodeKindName(nodes[node.forward_of].kind)));
    }
  }
  if (unlabeled == n) return std::nullopt;
  if (unlabeled != 0) {
    const auto it = std::find_if(nodes.begin(), nodes.end(), [](const Node& node) {
      return node.kind == NodeKind::kUnlabeled;
    });
    throw InputError(fmt::format(
        "{} has no kind but other nodes are labeled forward/loss/backward; label every node or "
        "none",
        Describe(nodes, static_cast<int32_t>(it - nodes.begin()))));
  }
  std::optional<int32_t> loss;
  for (int32_t id = 0; id < n; ++id) {
    if (nodes[id].kind != NodeKind::kLoss) continue;
    if (loss) {
      throw InputError(fmt::format("{} is a second loss node (the first is {})",
                                   Describe(nodes, id), *loss));
    }
    loss = id;
  }
  if (!loss) throw InputError("the graph labels forward/backward nodes but has no loss node");
  for (int32_t id = 0; id < n; ++id) {
    const NodeKind kind = nodes[id].kind;
    if (kind == NodeKind::kForward && id > *loss) {
      throw InputError(fmt::format("forward {} comes after the loss node {}; forward nodes must "
                                   "precede the loss",
                                   Describe(nodes, id), *loss));
    }
    if (kind == NodeKind::kBackward && id < *loss) {
      throw InputError(fmt::format("backward {} comes before the loss node {}; backward nodes "
                                   "must follow the loss",
                                   Describe(nodes, id), *loss));
    }
  }
  return loss;
}

}  // namespace

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kForward: return "forward";
    case NodeKind::kLoss: return "loss";
    case NodeKind::kBackward: return "backward";
    case NodeKind::kUnlabeled: return "unlabeled";
  }
  return "?";
}

std::optional<NodeKind> ParseNodeKind(const std::string& name) {
  for (NodeKind kind :
       {NodeKind::kForward, NodeKind::kLoss, NodeKind::kBackward, NodeKind::kUnlabeled}) {
    if (name == NodeKindName(kind)) return kind;
  }
  return std::nullopt;
}

Graph::Graph(std::vector<Node> nodes, std::vector<Edge> edges, std::string cost_unit,
             std::string name)
    : nodes_(std::move(nodes)),
      edges_(std::move(edges)),
      cost_unit_(std::move(cost_unit)),
      name_(std::move(name)) {
  ValidateNodes(nodes_);
  const int32_t n = size();
  ValidateEdgeEndpoints(edges_, n);
  preds_.assign(n, {});
  succs_.assign(n, {});
  for (const Edge& edge : edges_) {
    preds_[edge.dst].push_back(edge.src);
    succs_[edge.src].push_back(edge.dst);
  }
  for (int32_t id = 0; id < n; ++id) {
    std::sort(preds_[id].begin(), preds_[id].end());
    std::sort(succs_[id].begin(), succs_[id].end());
  }
  ValidateOrder(edges_, succs_);
  loss_ = ValidateKinds(nodes_);
  if (cost_unit_.empty()) throw InputError("the graph's cost unit is empty");
}

double Graph::total_cost() const {
  double total = 0;
  for (const Node& node : nodes_) total += node.cost;
  return total;
}

int64_t Graph::total_bytes() const {
  int64_t total = 0;
  for (const Node& node : nodes_) total += node.bytes;
  return total;
}

std::vector<int32_t> Graph::forward_nodes() const {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < size(); ++id) {
    if (nodes_[id].kind == NodeKind::kForward) ids.push_back(id);
  }
  return ids;
}

Graph WithoutWorkspace(const Graph& graph) {
  std::vector<Node> nodes = graph.nodes();
  for (Node& node : nodes) node.workspace_bytes = 0;
  return Graph(std::move(nodes), graph.edges(), graph.cost_unit(), graph.name());
}

bool HasForwardPass(const Graph& graph) {
  return graph.has_training_structure() && !graph.forward_nodes().empty();
}

bool HasBlocks(const Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [](const Node& node) { return !node.block.empty(); });
}

bool HasContractions(const Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [](const Node& node) { return node.contraction; });
}

void RequireTrainingStructure(const Graph& graph, const std::string& what) {
  if (HasForwardPass(graph)) return;
  throw InputError(fmt::format(
      "{} needs a training graph with forward, loss and backward nodes, but this graph {}", what,
      graph.has_training_structure() ? "has no forward nodes" : "is an unlabeled DAG"));
}

int64_t NoRematPeakBytes(const Graph& graph) {
  const int32_t n = graph.size();
  std::vector<int64_t> ends(n + 1, 0);  // bytes whose life ends after stage t, at index t + 1
  int64_t live = 0;  // values computed before t and still needed at t or later
  int64_t peak = 0;
  for (int32_t t = 0; t < n; ++t) {
    live -= ends[t];
    peak = std::max(peak, live + graph.node(t).bytes + graph.node(t).workspace_bytes);
    const int32_t last = graph.last_consumer(t);
    if (last > t) {
      live += graph.node(t).bytes;
      ends[last + 1] += graph.node(t).bytes;
    }
  }
  return peak;
}

int64_t MinimumPeakLowerBound(const Graph& graph) {
  int64_t bound = 0;
  for (int32_t v = 0; v < graph.size(); ++v) {
    int64_t needed = graph.node(v).bytes + graph.node(v).workspace_bytes;
    for (int32_t u : graph.preds(v)) needed += graph.node(u).bytes;
    bound = std::max(bound, needed);
  }
  return bound;
}

}  // namespace remat
