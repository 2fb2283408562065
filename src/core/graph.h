// The training graph: nodes in topological order, each producing one tensor (docs/design.md §1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat {

// Limits that keep every sum a schedule can form representable: the nodes' bytes and
// workspaces together (so live memory, budgets and fixed memory never overflow int64) and their costs together
// (so n evaluations of each stay finite for up to a million nodes).
inline constexpr int64_t kMaxTotalBytes = int64_t{1} << 62;
inline constexpr double kMaxTotalCost = 1e290;

// Role of a node in a training step. kUnlabeled marks a plain DAG without forward/backward
// structure: it can be scheduled, but strategies that need the structure refuse it.
enum class NodeKind { kForward, kLoss, kBackward, kUnlabeled };

const char* NodeKindName(NodeKind kind);
std::optional<NodeKind> ParseNodeKind(const std::string& name);

struct Node {
  std::string name;
  NodeKind kind = NodeKind::kUnlabeled;
  double cost = 0.0;        // in the graph's cost unit; >= 0
  int64_t bytes = 0;        // size of the output tensor; >= 0
  // Memory allocated and released inside the node's own execution (kernel scratch, gradient
  // temporaries), on top of its output; >= 0. Counted at the node's compute only (docs/design.md §3).
  int64_t workspace_bytes = 0;
  int32_t forward_of = -1;  // for a backward node: the forward node it differentiates, or -1
  // Module structure (docs/design.md §1, "Module structure"), read by checkpoint-blocks and
  // selective only: the repeated block a forward node belongs to ("" outside every block),
  // and whether the node is a contraction (a matmul, a convolution or attention), whose
  // output selective recomputation keeps.
  std::string block;
  bool contraction = false;
};

struct Edge {
  int32_t src = 0;  // the producer; src < dst
  int32_t dst = 0;  // the consumer, which reads src's output
  bool operator==(const Edge&) const = default;
};

// An immutable, validated DAG. Construction throws InputError with a precise message when
// the nodes or edges break an invariant (see Validate in graph.cc).
class Graph {
 public:
  Graph(std::vector<Node> nodes, std::vector<Edge> edges, std::string cost_unit = "unit",
        std::string name = "");

  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  const Node& node(int32_t id) const { return nodes_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Edge>& edges() const { return edges_; }
  const std::string& cost_unit() const { return cost_unit_; }
  const std::string& name() const { return name_; }

  // Sorted ids of the nodes this node reads / the nodes that read this node.
  const std::vector<int32_t>& preds(int32_t id) const { return preds_[id]; }
  const std::vector<int32_t>& succs(int32_t id) const { return succs_[id]; }
  // Largest successor id, or -1 when the node has no consumer.
  int32_t last_consumer(int32_t id) const {
    return succs_[id].empty() ? -1 : succs_[id].back();
  }

  double total_cost() const;
  int64_t total_bytes() const;

  // The loss node, when the graph has forward/backward structure.
  std::optional<int32_t> loss() const { return loss_; }
  // True when the nodes are labeled: forward nodes 0..f-1, the loss f, backward nodes after.
  bool has_training_structure() const { return loss_.has_value(); }
  // Forward node ids in increasing order (empty for unlabeled graphs).
  std::vector<int32_t> forward_nodes() const;

 private:
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::string cost_unit_;
  std::string name_;
  std::vector<std::vector<int32_t>> preds_;
  std::vector<std::vector<int32_t>> succs_;
  std::optional<int32_t> loss_;
};

// The same graph with every workspace_bytes set to 0: its plans hold the same tensors, so
// its simulated peak is what the node outputs alone reach.
Graph WithoutWorkspace(const Graph& graph);

// True when strategies built on the forward pass apply: the graph is labeled and has at least
// one forward node (a graph of only a loss node is labeled but has no forward pass).
bool HasForwardPass(const Graph& graph);

// True when some forward node names a block / is a contraction (the module structure that
// checkpoint-blocks / selective need).
bool HasBlocks(const Graph& graph);
bool HasContractions(const Graph& graph);

// Throws InputError naming `what` when HasForwardPass is false.
void RequireTrainingStructure(const Graph& graph, const std::string& what);

// The peak of the no-rematerialization schedule (checkpoint-all: every value held from the
// stage after its computation to the stage of its last consumer), in linear time and memory:
// at node t's compute the live values are t and every u < t whose last consumer is >= t, plus
// t's workspace.
// Equals Simulate(CheckpointAll) (tested), without building the n x n matrices.
int64_t NoRematPeakBytes(const Graph& graph);

// A lower bound on the peak of any schedule: every node runs at least once, with its output,
// its workspace and all of its inputs live, so the largest
// bytes[v] + workspace_bytes[v] + sum(bytes of preds(v)).
int64_t MinimumPeakLowerBound(const Graph& graph);

}  // namespace remat
