// The kernels each training node runs, as the executor runs them (docs/design.md §1, "a node costs
// what runs in it"), with their analytic work: FLOPs and bytes moved through memory. The cost
// models turn the work into a cost (cost_model.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/network_builder.h"

namespace remat {

struct KernelWork {
  double flops = 0;         // docs/design.md §1's analytic count (a multiply-accumulate is one FLOP)
  int64_t bytes_moved = 0;  // tensors read and written, 4 bytes per element
};

// Which executor's temporaries a node's workspace estimate counts (docs/zoo.md, "Workspace").
enum class WorkspaceModel {
  // remat-run's: libtorch on the CPU, whose oneDNN convolutions also make blocked copies of
  // their operands. Graphs built without a device preset.
  kLibtorchCpu,
  // The temporaries any framework makes (fresh weight gradients, fused activation gradients,
  // pooling indices, masks, gradient sums), without a backend's own copies: graphs for a
  // device preset (GPUs, whose convolution workspace the library sizes from free memory).
  kPortable,
  // No workspace at all: every node holds only its output, the paper's MILP accounting.
  kNone,
};

// A kernel of a backward node: which layer's gradient it computes, what it does, and the
// temporaries it allocates and releases (its workspace, estimated from the executor's kernels).
enum class GradientKind { kInput, kWeights, kLoss };
struct BackwardKernel {
  int32_t layer = -1;  // the layer differentiated (the last layer for the loss gradient)
  GradientKind kind = GradientKind::kInput;
  KernelWork work;
  int64_t workspace_bytes = 0;
};

// Layer `id`'s forward kernel: its FLOPs; its inputs, output and the weights it reads.
KernelWork ForwardWork(const NetworkBuilder& net, int32_t id);

// The vector-Jacobian product of layer `id` with respect to its input at `position`: what
// bwd(input) runs for this consumer. Convolutions and dense layers pay their forward FLOPs
// (a fused activation's backward included); element-wise, pooling and copy layers move the
// output gradient and the input (max pooling also recomputes its indices); attention's
// scores pay two products (dQ and dK), its context one per factor.
KernelWork InputGradientWork(const NetworkBuilder& net, int32_t id, int32_t position);

// True when the layer's weights get gradients: it has trainable ones, or it is a tied head.
bool HasWeightGradient(const Layer& layer);

// The gradients of layer `id`'s weights (zero work for a layer without trainable weights):
// convolutions and dense layers their forward FLOPs without the fused activation, reading the
// output gradient and the input and writing the weights' gradient; normalisations a reduction
// over the input; an embedding a scatter of the output gradient into its table. A tied head
// writes the gradient of the table it reads.
KernelWork WeightGradientWork(const NetworkBuilder& net, int32_t id);

// The loss gradient with respect to the last layer's output (of `output_bytes`), run by
// bwd(last layer): a few element-wise passes (log-softmax or the picked probabilities).
KernelWork LossGradientWork(int64_t output_bytes);

// Everything bwd(j) runs, in the executor's order: for each consumer c of layer j, the input
// gradient of every input position of c that reads j, and c's weight gradients when j is c's
// first input (they are computed once, by that node); j's own weight gradients when j reads
// the network input (no backward node of the input exists); the loss gradient when j is the
// last layer. Each layer's weight gradients are in exactly one node's list.
std::vector<BackwardKernel> BackwardKernels(
    const NetworkBuilder& net, int32_t j,
    WorkspaceModel workspace = WorkspaceModel::kLibtorchCpu);

// Estimated memory allocated and released inside a node, above its output (Node::
// workspace_bytes), from the temporaries the executor's kernels make (docs/zoo.md,
// "Workspace"). Forward: a fused softmax's input, max pooling's int64 indices, dropout's mask,
// the partial sums of an add of three or more inputs, attention's per-head copies. Backward:
// the largest, over the kernels of bwd(j) in order, of that kernel's temporaries (a fused
// activation's gradient, a convolution's fresh weight gradient, recomputed pooling indices, a
// regenerated mask, the loss gradient's log-probabilities) plus one gradient of j's size for
// every contribution after the first (it is added into the first, then released).
// Under kLibtorchCpu a convolution with a kernel or stride above 1 also counts oneDNN's
// blocked copies of its operands; under kNone both are 0.
int64_t ForwardWorkspaceBytes(const NetworkBuilder& net, int32_t id,
                              WorkspaceModel workspace = WorkspaceModel::kLibtorchCpu);
int64_t BackwardWorkspaceBytes(const NetworkBuilder& net, int32_t j,
                               WorkspaceModel workspace = WorkspaceModel::kLibtorchCpu);

}  // namespace remat
