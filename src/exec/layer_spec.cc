// The zoo's layers as the executor runs them: a copy of each stored Layer with its input shapes,
// and the checks of what the executor's kernels support.
#include "exec/layer_spec.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace remat::exec {
namespace {

[[noreturn]] void Fail(const ModelInfo& info, const Layer& layer, const std::string& what) {
  throw InputError(fmt::format("{}: layer '{}' ({}): {}", info.model, layer.name,
                               LayerKindName(layer.kind), what));
}

const char* ActivationName(Activation activation) {
  switch (activation) {
    case Activation::kNone: return "no";
    case Activation::kRelu: return "ReLU";
    case Activation::kRelu6: return "ReLU6";
    case Activation::kSoftmax: return "softmax";
    case Activation::kGelu: return "GELU";
  }
  return "?";
}

// Convolutions and dense layers apply ReLU (in place) or softmax to their output.
void CheckFused(const ModelInfo& info, const Layer& layer) {
  if (layer.activation == Activation::kRelu6 || layer.activation == Activation::kGelu) {
    Fail(info, layer, fmt::format("a fused {} activation is not supported by the executor "
                                  "(use an activation layer)", ActivationName(layer.activation)));
  }
}

void CheckRunnable(const ModelInfo& info, const ExecLayer& e, const std::vector<ExecLayer>& earlier,
                   bool tokens) {
  const Shape& in = e.input_shapes[0];
  const Sides& pad = e.pad;
  switch (e.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
      // ATen pads both sides of an axis alike; Keras's 'same' does at odd kernels, stride 1.
      if (pad.top != pad.bottom || pad.left != pad.right) {
        Fail(info, e, fmt::format("asymmetric padding (top {}, bottom {}, left {}, right {}) is "
                                  "not supported by the executor (pad with a zero padding layer "
                                  "and convolve 'valid')", pad.top, pad.bottom, pad.left,
                                  pad.right));
      }
      CheckFused(info, e);
      break;
    case LayerKind::kConv2DTranspose:
      // Keras 'valid': in * s + max(k - s, 0), which is ATen's (in - 1) * s + k when k >= s.
      if (e.padding != Padding::kValid || e.kernel < e.stride) {
        Fail(info, e, "the executor runs 'valid' transposed convolutions with kernel >= stride "
                      "only");
      }
      CheckFused(info, e);
      break;
    case LayerKind::kDense:
      // Rank 3 only on token sequences: image tensors are stored channels-first.
      if (in.size() != 2 && (in.size() != 3 || !tokens)) {
        Fail(info, e, "the executor runs dense layers on rank 2 (or rank 3 tokens)");
      }
      if (e.tied_to >= 0 &&
          (e.tied_to >= static_cast<int32_t>(earlier.size()) ||
           earlier[e.tied_to].kind != LayerKind::kEmbedding)) {
        Fail(info, e, fmt::format("tied to layer {}, which is not an earlier embedding",
                                  e.tied_to));
      }
      CheckFused(info, e);
      break;
    case LayerKind::kEmbedding:
      if (e.inputs[0] >= 0 || in.size() != 2) {
        Fail(info, e, "the executor embeds the network's (B, S) token ids only");
      }
      break;
    case LayerKind::kMatMul:
      if (e.attention != AttentionPart::kScores && e.attention != AttentionPart::kContext) {
        Fail(info, e, "the executor runs the matrix products of attention only");
      }
      if (e.attention == AttentionPart::kContext && e.inputs[0] == e.inputs[1]) {
        Fail(info, e, "the attention context multiplies two different tensors");
      }
      break;
    case LayerKind::kActivation:
      if (e.attention == AttentionPart::kSoftmax &&
          (e.inputs[0] < 0 || earlier[e.inputs[0]].attention != AttentionPart::kScores)) {
        Fail(info, e, "an attention softmax must read attention scores");
      }
      if (e.attention != AttentionPart::kNone && e.attention != AttentionPart::kSoftmax) {
        Fail(info, e, "an activation layer that is another part of attention");
      }
      break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
      if (pad != Sides{}) Fail(info, e, "pooling that pads is not supported by the executor");
      break;
    case LayerKind::kReshape:
      if (in.back() != e.output_shape.back() || in.size() < 2) {
        Fail(info, e, "the executor supports reshapes that keep the channel axis");
      }
      break;
    default:
      break;
  }
  if (tokens && e.activation == Activation::kSoftmax && e.attention != AttentionPart::kSoftmax) {
    Fail(info, e, "a softmax on token activations other than attention's");
  }
  if (in.size() == 4 && e.kind != LayerKind::kFlatten && e.kind != LayerKind::kGlobalAvgPool &&
      e.kind != LayerKind::kReshape && e.attention != AttentionPart::kContext &&
      e.output_shape.size() != 4) {
    Fail(info, e, "unexpected rank change");
  }
}

}  // namespace

std::vector<ExecLayer> DecodeLayers(const ModelInfo& info) {
  std::vector<ExecLayer> result;
  const bool tokens = info.input_shape.size() == 2;  // (B, S) ids, not an image batch
  for (const Layer& layer : info.layers) {
    ExecLayer e;
    static_cast<Layer&>(e) = layer;
    for (int32_t input : layer.inputs) {
      e.input_shapes.push_back(input < 0 ? info.input_shape : info.layers.at(input).output_shape);
    }
    if (e.input_shapes.empty()) Fail(info, layer, "a layer without inputs");
    CheckRunnable(info, e, result, tokens);
    result.push_back(std::move(e));
  }
  return result;
}

}  // namespace remat::exec
