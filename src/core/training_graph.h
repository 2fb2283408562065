// Builders of training graphs: the forward-to-training rule of docs/design.md §1 and the paper's
// linear benchmark graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"

namespace remat {

struct ForwardNode {
  std::string name;
  double cost = 0.0;                    // forward cost in the graph's unit
  int64_t bytes = 0;                    // output bytes
  // The cost of bwd(i): the kernels that run in it (docs/design.md §1: the input gradients of i's
  // consumers and the weight gradients computed there). Default: twice the forward cost (the
  // paper's shortcut, for hand-written graphs).
  std::optional<double> backward_cost;
  int64_t workspace_bytes = 0;           // of the forward node (Node::workspace_bytes)
  int64_t backward_workspace_bytes = 0;  // of bwd(i)
  // The vector-Jacobian product with respect to one input reads the node's other inputs: a
  // product of two activations (attention's P V, a MatMul or Mul of two activations). Gives
  // the extra edges of BuildTrainingGraph (docs/semantics.md).
  bool backward_reads_inputs = false;
  std::string block;         // Node::block of the forward node
  bool contraction = false;  // Node::contraction of the forward node
};

// A forward DAG: nodes in topological order, edges src -> dst with src < dst.
struct ForwardGraph {
  std::string name;
  std::string cost_unit = "unit";
  std::vector<ForwardNode> nodes;
  std::vector<Edge> edges;
  int64_t loss_bytes = 4;  // one float per sample
  double loss_cost = 0.0;
};

// docs/design.md §1: forward nodes 0..f-1, loss f, bwd(i) = 2f - i; every forward edge j -> i gives
// j -> i, bwd(i) -> bwd(j) and i -> bwd(j); every forward i gives i -> bwd(i); f-1 feeds the
// loss and the loss feeds bwd(f-1). One rule beyond the paper's (on purpose, docs/semantics.md):
// for a node i with backward_reads_inputs, every ordered pair of distinct inputs j != k of i
// gives k -> bwd(j), unless that edge already exists (k is also a consumer of j). The result
// has 2f+1 nodes and 3e+f+2+x edges, x the number of such extra edges (x = d(d-1) per flagged
// node with d distinct inputs, less the duplicates); without flags x = 0.
// Throws InputError when the forward graph is invalid.
Graph BuildTrainingGraph(const ForwardGraph& forward);

// The paper's linear benchmark graph: 2n+1 unit nodes (forward 0..n-1, loss n, backward
// n+1..2n), edges i -> i+1 for every consecutive pair and i -> 2n-i for every forward i.
Graph LinearGraph(int32_t n);

}  // namespace remat
