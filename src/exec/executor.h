// Runs one training step of a Network by following a plan's operation list exactly, and the
// plain autograd step it must reproduce.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "core/plan.h"
#include "exec/network.h"

namespace remat::exec {

struct StepResult {
  double loss = 0;                  // mean of the per-sample losses
  int64_t predicted_peak_bytes = 0;  // the simulator's peak of the plan, workspace included
  // The simulator's peak of the plan counting node outputs only (no workspace).
  int64_t predicted_tensor_peak_bytes = 0;
  // Largest sum of node tensors held by the executor at a compute, counting the new output:
  // predicted_tensor_peak_bytes measured on real tensors (equal by construction and checked).
  int64_t tensor_peak_bytes = 0;
  // The counting allocator's peak during the step minus the bytes live before it:
  // activations plus every transient (kernel workspace, index tensors, gradient temporaries).
  int64_t measured_peak_bytes = 0;
  int64_t fixed_bytes = 0;          // allocator bytes live before the step (weights, input, ...)
  // The largest transient of one compute: its allocator peak above the bytes live before it,
  // minus its output. Kernel workspace, max-pool indices, dropout masks, gradient terms of
  // several consumers, parameter-gradient temporaries before they are accumulated.
  int64_t largest_transient_bytes = 0;
  int32_t largest_transient_node = -1;
  int64_t evaluations = 0;          // compute operations run
  int64_t recomputations = 0;       // evaluations beyond the first of each node
  double seconds = 0;               // wall time of the step
};

// Executes nodes of docs/design.md §1's training graph of `network`: forward i = layer i, the loss
// f, bwd(i) = 2f - i. A node reads only the values its in-edges name (checked on every read,
// InternalError otherwise), plus parameters, the input batch and the labels.
class Executor {
 public:
  Executor(Network& network, const Graph& graph);

  // One training step: zeroes the gradients, runs `plan`, accumulates parameter gradients
  // into network.gradients(). The plan is simulated first (InternalError if invalid).
  // `dropout_seed` fixes this step's dropout masks.
  StepResult Run(const Plan& plan, uint64_t dropout_seed = 1);

  // Zeroes the gradients, drops every value and resets per-node state (batch-norm statistics,
  // dropout seeds from `dropout_seed`). Run calls it; profiling calls it before ComputeNode.
  void BeginStep(uint64_t dropout_seed);

  // Computes one node from the values currently held (for profiling: every value live).
  // `first` controls parameter-gradient accumulation and batch-norm statistics.
  at::Tensor ComputeNode(int32_t node, bool first);
  void SetValue(int32_t node, at::Tensor value) { values_[node] = std::move(value); }
  void ClearValues();

  const Graph& graph() const { return graph_; }

 private:
  const at::Tensor& Read(int32_t reader, int32_t node) const;
  int32_t forward_count() const { return network_.size(); }

  Network& network_;
  const Graph& graph_;
  std::vector<at::Tensor> values_;
  std::vector<ForwardState> states_;
};

// The plain step: the same forward kernels under autograd on copies of the weights, then
// backward() from the mean loss. Batch-norm running statistics are not touched.
struct ReferenceStep {
  double loss = 0;
  std::vector<std::vector<at::Tensor>> gradients;  // per layer, as Network::gradients
};
ReferenceStep AutogradStep(const Network& network, uint64_t dropout_seed = 1);

// Largest absolute difference between the network's gradients and `reference`, and whether
// every gradient is bitwise equal.
struct GradientComparison {
  double max_abs_diff = 0;
  double max_abs_gradient = 0;  // for scale
  bool bitwise_equal = true;
};
GradientComparison CompareGradients(const std::vector<std::vector<at::Tensor>>& a,
                                    const std::vector<std::vector<at::Tensor>>& b);
std::vector<std::vector<at::Tensor>> CopyGradients(const Network& network);

// Gradients agree when bitwise equal, or within 1e-6 of the largest gradient's magnitude
// (kernels that are not deterministic across calls; none of the zoo models' are).
bool GradientsAgree(const GradientComparison& comparison);

// The dropout seed of layer `id` in the step with `step_seed` (never 0).
uint64_t DropoutSeed(uint64_t step_seed, int32_t id);

}  // namespace remat::exec
