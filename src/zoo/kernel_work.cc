// The kernels of forward and backward nodes and their analytic work (docs/zoo.md).
#include "zoo/kernel_work.h"

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

}  // namespace

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

std::vector<BackwardKernel> BackwardKernels(const NetworkBuilder& net, int32_t j) {
  const std::vector<Layer>& layers = net.layers();
  const int32_t f = static_cast<int32_t>(layers.size());
  std::vector<BackwardKernel> kernels;
  if (j == f - 1) {
    kernels.push_back(
        {j, GradientKind::kLoss, LossGradientWork(layers[j].output_bytes())});
  }
  for (int32_t c = j + 1; c < f; ++c) {
    const Layer& consumer = layers[c];
    bool reads = false;
    for (int32_t position = 0; position < static_cast<int32_t>(consumer.inputs.size());
         ++position) {
      if (consumer.inputs[position] != j) continue;
      reads = true;
      kernels.push_back({c, GradientKind::kInput, InputGradientWork(net, c, position)});
    }
    if (reads && consumer.inputs[0] == j && HasWeightGradient(consumer)) {
      kernels.push_back({c, GradientKind::kWeights, WeightGradientWork(net, c)});
    }
  }
  const Layer& own = layers[j];
  if (!own.inputs.empty() && own.inputs[0] == NetworkBuilder::kInput && HasWeightGradient(own)) {
    kernels.push_back({j, GradientKind::kWeights, WeightGradientWork(net, j)});
  }
  return kernels;
}

}  // namespace remat
