// The kernels of forward and backward nodes and their analytic work (docs/zoo.md).
#include "model/kernel_work.h"

#include <algorithm>

#include "core/errors.h"

namespace remat {
namespace {

double Elements(const NetworkBuilder& net, int32_t tensor) {
  return static_cast<double>(NumElements(net.shape(tensor)));
}

int64_t Bytes(double elements) { return static_cast<int64_t>(elements) * kElementBytes; }

bool HasMatrixKernel(LayerKind kind) {
  return kind == LayerKind::kConv2D || kind == LayerKind::kDepthwiseConv2D ||
         kind == LayerKind::kConv2DTranspose || kind == LayerKind::kDense;
}

// The FLOPs of a layer's fused activation (one per output element), part of its `flops`.
double FusedActivationFlops(const Layer& layer) {
  if (!HasMatrixKernel(layer.kind) || layer.activation == Activation::kNone) return 0;
  return static_cast<double>(NumElements(layer.output_shape));
}

// A dense layer that reads weights it does not own (GPT-2's head reads the token table).
bool IsTiedHead(const Layer& layer) { return layer.tied_to >= 0; }

// The gradient before a fused activation: a fresh tensor of the output's size.
int64_t FusedGradientBytes(const Layer& layer) {
  return FusedActivationFlops(layer) > 0 ? layer.output_bytes() : 0;
}

bool IsConvolution(const Layer& layer) {
  return layer.kind == LayerKind::kConv2D || layer.kind == LayerKind::kDepthwiseConv2D ||
         layer.kind == LayerKind::kConv2DTranspose;
}

// A convolution that libtorch's CPU backend runs through oneDNN with blocked copies of its
// operands; a 1x1 stride-1 convolution runs as a matrix product on the tensors as they are.
bool ReordersOperands(const Layer& layer, WorkspaceModel workspace) {
  return workspace == WorkspaceModel::kLibtorchCpu && IsConvolution(layer) &&
         (layer.kernel > 1 || layer.stride > 1);
}

int64_t WeightBytes(const Layer& layer) { return layer.trainable_parameters * kElementBytes; }

int64_t InputGradientWorkspace(const NetworkBuilder& net, int32_t id, int32_t position,
                               WorkspaceModel workspace) {
  const Layer& layer = net.layers()[id];
  const int64_t x = net.bytes(layer.inputs.at(position));
  const int64_t out = layer.output_bytes();
  switch (layer.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
      // Blocked copies of the output gradient and the input gradient, or of the weights when
      // they are larger (measured, docs/zoo.md "Workspace").
      return FusedGradientBytes(layer) +
             (ReordersOperands(layer, workspace) ? std::max(out + x, WeightBytes(layer)) : 0);
    case LayerKind::kDense:
      return FusedGradientBytes(layer);
    case LayerKind::kBatchNorm:
      return x;  // the centred input inside native_batch_norm_backward
    case LayerKind::kMaxPool:
      // The recomputed output and its int64 indices; the values are released before the
      // input gradient (the node's output) is allocated.
      return std::max(2 * out, 3 * out - x);
    case LayerKind::kDropout:
      return x;  // the regenerated mask
    case LayerKind::kActivation:
      return layer.attention == AttentionPart::kSoftmax ? out : 0;  // before the scale
    case LayerKind::kMatMul:
      // Per-head copies of the operands and one part of the qkv gradient.
      return layer.attention == AttentionPart::kScores ? x : out + x / 3;
    default:
      return 0;
  }
}

int64_t WeightGradientWorkspace(const NetworkBuilder& net, int32_t id) {
  const Layer& layer = net.layers()[id];
  switch (layer.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
    case LayerKind::kBatchNorm:
    case LayerKind::kLayerNorm:
      return WeightBytes(layer);  // returned fresh, then added
    case LayerKind::kEmbedding:
      return layer.output_bytes();  // the gradient rows of the tokens that occur, at most
    default:
      return 0;  // dense layers accumulate in place (addmm_)
  }
}

}  // namespace

int64_t ForwardWorkspaceBytes(const NetworkBuilder& net, int32_t id, WorkspaceModel workspace) {
  if (workspace == WorkspaceModel::kNone) return 0;
  const Layer& layer = net.layers()[id];
  const int64_t out = layer.output_bytes();
  const int64_t x = layer.inputs.empty() ? 0 : net.bytes(layer.inputs[0]);
  switch (layer.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
    case LayerKind::kDense: {
      const int64_t softmax = layer.activation == Activation::kSoftmax ? out : 0;  // out of place
      // Blocked copies: the output, or the input and the weights.
      const int64_t reorders =
          ReordersOperands(layer, workspace) ? std::max(out, x + WeightBytes(layer)) : 0;
      return softmax + reorders;
    }
    case LayerKind::kMaxPool:
      return 2 * out;  // int64 indices
    case LayerKind::kDropout:
      return x;  // the mask
    case LayerKind::kAdd:
      return layer.inputs.size() > 2 ? out : 0;  // partial sums
    case LayerKind::kEmbedding:
      return out;  // the token rows, before the positions are added
    case LayerKind::kActivation:
      return layer.attention == AttentionPart::kSoftmax ? out : 0;  // the scaled scores
    case LayerKind::kMatMul:
      // Scores: Q and K per head; context: V per head and the product before its reshape.
      return layer.attention == AttentionPart::kScores
                 ? 2 * x / 3
                 : out + net.bytes(layer.inputs.back()) / 3;
    default:
      return 0;
  }
}

int64_t BackwardWorkspaceBytes(const NetworkBuilder& net, int32_t j, WorkspaceModel model) {
  if (model == WorkspaceModel::kNone) return 0;  // not even the gradient sums
  const int64_t gradient = net.bytes(j);
  const std::vector<BackwardKernel> kernels = BackwardKernels(net, j, model);
  int64_t workspace = 0;
  bool have_gradient = false;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const BackwardKernel& kernel = kernels[k];
    if (kernel.kind == GradientKind::kWeights) continue;  // counted with its input gradient
    int64_t during = kernel.workspace_bytes;
    // A consumer's weight gradients run in the same call as its input gradient.
    if (k + 1 < kernels.size() && kernels[k + 1].kind == GradientKind::kWeights &&
        kernels[k + 1].layer == kernel.layer) {
      during += kernels[k + 1].workspace_bytes;
    }
    if (have_gradient) during += gradient;  // a second contribution, added into the first
    have_gradient = true;
    workspace = std::max(workspace, during);
  }
  // j's own weight gradients (j reads the network input) run last, beside the whole gradient.
  if (!kernels.empty() && kernels.back().kind == GradientKind::kWeights &&
      kernels.back().layer == j) {
    workspace = std::max(workspace, kernels.back().workspace_bytes);
  }
  return workspace;
}

KernelWork ForwardWork(const NetworkBuilder& net, int32_t id) {
  const Layer& layer = net.layers()[id];
  int64_t bytes = layer.output_bytes() + layer.weights_read * kElementBytes;
  for (int32_t input : layer.inputs) bytes += net.bytes(input);
  return {.flops = layer.flops, .bytes_moved = bytes};
}

KernelWork InputGradientWork(const NetworkBuilder& net, int32_t id, int32_t position) {
  const Layer& layer = net.layers()[id];
  const int32_t input = layer.inputs.at(position);
  const double g = static_cast<double>(NumElements(layer.output_shape));  // output gradient
  const double x = Elements(net, input);                                  // input (gradient)
  switch (layer.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
    case LayerKind::kDense: {
      // Reads the output gradient (and the output, through a fused activation) and the
      // weights; writes the input gradient.
      const double fused_reads = FusedActivationFlops(layer) > 0 ? g : 0;
      return {.flops = layer.flops,
              .bytes_moved = Bytes(g + fused_reads + x) + layer.weights_read * kElementBytes};
    }
    case LayerKind::kMaxPool:
      // The indices are recomputed from the input (int64, twice a float), then the gradient
      // is scattered through them.
      return {.flops = 0, .bytes_moved = Bytes(2 * x + 2 * g) + Bytes(4 * g)};
    case LayerKind::kDropout:
      // The mask is regenerated (written and read) and multiplied in.
      return {.flops = x, .bytes_moved = Bytes(g + 3 * x)};
    case LayerKind::kMatMul: {
      if (layer.inputs.size() == 1) {
        // Attention scores Q K^T on the fused qkv tensor: dQ and dK, two products.
        return {.flops = 2 * layer.flops, .bytes_moved = Bytes(g + 2 * x)};
      }
      // A product of two activations: the gradient of one factor reads the other.
      const double other = Elements(net, layer.inputs.at(1 - position));
      return {.flops = layer.flops, .bytes_moved = Bytes(g + other + x)};
    }
    case LayerKind::kEmbedding:
      throw InternalError("an embedding reads the network input: it has no input gradient");
    default:
      // Element-wise, normalisation, pooling, padding, copies: read the output gradient and
      // the input (or output), write the input gradient.
      return {.flops = layer.flops, .bytes_moved = Bytes(g + 2 * x)};
  }
}

bool HasWeightGradient(const Layer& layer) {
  return layer.trainable_parameters > 0 || IsTiedHead(layer);
}

KernelWork WeightGradientWork(const NetworkBuilder& net, int32_t id) {
  const Layer& layer = net.layers()[id];
  if (!HasWeightGradient(layer)) return {};
  const double g = static_cast<double>(NumElements(layer.output_shape));
  const int64_t weights = IsTiedHead(layer) ? layer.weights_read : layer.trainable_parameters;
  const double x = layer.inputs.empty() ? 0 : Elements(net, layer.inputs[0]);
  switch (layer.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
    case LayerKind::kDense:
      return {.flops = layer.flops - FusedActivationFlops(layer),
              .bytes_moved = Bytes(g + x) + weights * kElementBytes};
    case LayerKind::kEmbedding:
      // Each output vector adds its gradient into one token row and one position row.
      return {.flops = 2 * g, .bytes_moved = Bytes(3 * g)};
    default:
      // Batch and layer norm: scale and shift gradients, a reduction over the input.
      return {.flops = 2 * x, .bytes_moved = Bytes(g + x) + weights * kElementBytes};
  }
}

KernelWork LossGradientWork(int64_t output_bytes) {
  const double out = static_cast<double>(output_bytes / kElementBytes);
  return {.flops = 3 * out, .bytes_moved = 3 * output_bytes};
}

std::vector<BackwardKernel> BackwardKernels(const NetworkBuilder& net, int32_t j,
                                            WorkspaceModel workspace) {
  const std::vector<Layer>& layers = net.layers();
  const int32_t f = static_cast<int32_t>(layers.size());
  std::vector<BackwardKernel> kernels;
  if (j == f - 1) {
    // Logits (no softmax in the last layer) go through log-softmax: the log-probabilities and
    // their gradient are temporaries of the output's size.
    const bool logits = layers[j].activation != Activation::kSoftmax;
    kernels.push_back({j, GradientKind::kLoss, LossGradientWork(layers[j].output_bytes()),
                       logits ? 2 * layers[j].output_bytes() : 0});
  }
  for (int32_t c = j + 1; c < f; ++c) {
    const Layer& consumer = layers[c];
    bool reads = false;
    for (int32_t position = 0; position < static_cast<int32_t>(consumer.inputs.size());
         ++position) {
      if (consumer.inputs[position] != j) continue;
      reads = true;
      kernels.push_back({c, GradientKind::kInput, InputGradientWork(net, c, position),
                         InputGradientWorkspace(net, c, position, workspace)});
    }
    if (reads && consumer.inputs[0] == j && HasWeightGradient(consumer)) {
      kernels.push_back({c, GradientKind::kWeights, WeightGradientWork(net, c),
                         WeightGradientWorkspace(net, c)});
    }
  }
  const Layer& own = layers[j];
  if (!own.inputs.empty() && own.inputs[0] == NetworkBuilder::kInput && HasWeightGradient(own)) {
    // Run apart from any input gradient: the fused activation's gradient is made again.
    kernels.push_back({j, GradientKind::kWeights, WeightGradientWork(net, j),
                       WeightGradientWorkspace(net, j) + FusedGradientBytes(own)});
  }
  if (workspace == WorkspaceModel::kNone) {
    for (BackwardKernel& kernel : kernels) kernel.workspace_bytes = 0;
  }
  return kernels;
}

}  // namespace remat
