// Inference of layer options from the zoo's shapes, parameter counts and FLOPs, with a check
// that the inferred options reproduce them.
#include "exec/layer_spec.h"

#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"

namespace remat::exec {
namespace {

[[noreturn]] void Fail(const std::string& model, const Layer& layer, const std::string& what) {
  throw InputError(fmt::format("{}: layer '{}' ({}): {}", model, layer.name,
                               LayerKindName(layer.kind), what));
}

int64_t IntSqrt(int64_t v) {
  if (v < 1) return 0;
  auto r = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(v))));
  return r * r == v ? r : 0;
}

// Keras output length of a window (DESIGN-independent: layers.cc's OutputLength).
int64_t WindowOut(int64_t in, int64_t kernel, int64_t stride, bool same) {
  return same ? (in + stride - 1) / stride : (in - kernel) / stride + 1;
}

Activation NamedActivation(const ModelInfo& info, const Layer& layer, bool last) {
  if (last || layer.name.find("softmax") != std::string::npos) return Activation::kSoftmax;
  if (layer.name.find("gelu") != std::string::npos) return Activation::kGelu;
  if (info.model == "mobilenet") return Activation::kRelu6;
  return Activation::kRelu;
}

// Fused activation from the FLOPs left over after the layer's own: 0 or |out|.
Activation FusedActivation(const ModelInfo& info, const Layer& layer, double own_flops,
                           bool last) {
  const double extra = layer.flops - own_flops;
  const auto out = static_cast<double>(NumElements(layer.output_shape));
  if (extra == 0) return Activation::kNone;
  if (extra == out) return NamedActivation(info, layer, last);
  Fail(info.model, layer, fmt::format("FLOPs {} do not match a kernel with or without a fused "
                                      "activation", layer.flops));
}

// Stride and padding of a square window on (H, W) giving (Ho, Wo); smallest stride first,
// 'valid' before 'same' at each stride.
void InferWindow(const ModelInfo& info, const Layer& layer, ExecLayer& e, const Shape& in,
                 bool allow_same) {
  const int64_t k = e.kernel;
  const int64_t limit = std::max(in[1], in[2]) + k;
  for (int64_t s = 1; s <= limit; ++s) {
    for (bool same : {false, true}) {
      if (same && !allow_same) continue;
      if (!same && (in[1] < k || in[2] < k)) continue;
      if (WindowOut(in[1], k, s, same) != layer.output_shape[1] ||
          WindowOut(in[2], k, s, same) != layer.output_shape[2]) {
        continue;
      }
      e.stride = s;
      if (same) {
        const int64_t total_h = std::max<int64_t>((layer.output_shape[1] - 1) * s + k - in[1], 0);
        const int64_t total_w = std::max<int64_t>((layer.output_shape[2] - 1) * s + k - in[2], 0);
        if (total_h % 2 != 0 || total_w % 2 != 0 || total_h != total_w) {
          Fail(info.model, layer, "asymmetric 'same' padding is not supported by the executor");
        }
        e.conv_padding = total_h / 2;
      }
      return;
    }
  }
  Fail(info.model, layer, "no stride and padding reproduce the output shape");
}

// The embedding layer whose (vocab, hidden) token table a bias-free tied dense layer reads.
int32_t TiedEmbedding(const ModelInfo& info, const Layer& layer, int64_t hidden, int64_t units) {
  int32_t found = -1;
  for (int32_t id = 0; id < static_cast<int32_t>(info.layers.size()); ++id) {
    const Layer& l = info.layers[id];
    if (l.kind != LayerKind::kEmbedding || l.output_shape.back() != hidden) continue;
    const int64_t vocab = l.parameters / hidden - info.input_shape.back();
    if (vocab != units) continue;
    if (found >= 0) Fail(info.model, layer, "more than one embedding it could be tied to");
    found = id;
  }
  if (found < 0) Fail(info.model, layer, "tied weights without a matching embedding");
  return found;
}

// Attention scores Q K^T: one (B, S, 3H) input, output (B, heads, S, S), FLOPs B*S*S*H.
// Context P V: inputs (B, heads, S, S) and (B, S, 3H), output (B, S, H), FLOPs B*S*S*H.
void DecodeAttention(const ModelInfo& info, const Layer& layer, ExecLayer& e) {
  const std::vector<Shape>& ins = e.input_shapes;
  const Shape& out = layer.output_shape;
  const Shape& qkv = ins.back();
  if (qkv.size() != 3 || qkv[2] % 3 != 0) {
    Fail(info.model, layer, "the executor runs matrix products of attention only");
  }
  const int64_t batch = qkv[0], seq = qkv[1], hidden = qkv[2] / 3;
  if (ins.size() == 1 && out.size() == 4 && out == Shape{batch, out[1], seq, seq}) {
    e.attention = AttentionPart::kScores;
    e.heads = out[1];
  } else if (ins.size() == 2 && ins[0].size() == 4 && ins[0] == Shape{batch, ins[0][1], seq, seq} &&
             out == Shape{batch, seq, hidden} && layer.inputs[0] != layer.inputs[1]) {
    e.attention = AttentionPart::kContext;
    e.heads = ins[0][1];
  } else {
    Fail(info.model, layer, "the executor runs matrix products of attention only");
  }
  if (e.heads < 1 || hidden % e.heads != 0) Fail(info.model, layer, "heads do not divide H");
  e.head_size = hidden / e.heads;
  const double flops = static_cast<double>(batch) * static_cast<double>(seq * seq) *
                       static_cast<double>(hidden);
  if (layer.flops != flops) Fail(info.model, layer, "FLOPs do not match attention's B*S*S*H");
}

}  // namespace

std::vector<ExecLayer> DecodeLayers(const ModelInfo& info) {
  std::vector<ExecLayer> result;
  const int32_t count = static_cast<int32_t>(info.layers.size());
  const bool tokens = info.input_shape.size() == 2;  // (B, S) ids, not an image batch
  for (int32_t id = 0; id < count; ++id) {
    const Layer& layer = info.layers[id];
    const bool last = id == count - 1;
    ExecLayer e{.name = layer.name, .kind = layer.kind, .inputs = layer.inputs,
                .output_shape = layer.output_shape,
                .backward_reads_inputs = layer.backward_reads_inputs};
    for (int32_t input : layer.inputs) {
      e.input_shapes.push_back(input < 0 ? info.input_shape : info.layers[input].output_shape);
    }
    if (e.input_shapes.empty()) Fail(info.model, layer, "a layer without inputs");
    const Shape& in = e.input_shapes[0];
    const Shape& out = layer.output_shape;
    const auto out_elems = static_cast<double>(NumElements(out));
    switch (layer.kind) {
      case LayerKind::kConv2D:
      case LayerKind::kDepthwiseConv2D:
      case LayerKind::kConv2DTranspose: {
        const bool depthwise = layer.kind == LayerKind::kDepthwiseConv2D;
        const int64_t cin = in[3];
        const int64_t filters = out[3];
        const int64_t per_k2 = depthwise ? cin : cin * filters;
        const int64_t bias_size = filters;
        int64_t k = 0;
        if ((layer.parameters - bias_size) % per_k2 == 0 &&
            (k = IntSqrt((layer.parameters - bias_size) / per_k2)) > 0) {
          e.use_bias = true;
        } else if (layer.parameters % per_k2 == 0 && (k = IntSqrt(layer.parameters / per_k2)) > 0) {
          e.use_bias = false;
        } else {
          Fail(info.model, layer, fmt::format("{} parameters fit no square kernel",
                                              layer.parameters));
        }
        e.kernel = k;
        double own = 0;
        if (layer.kind == LayerKind::kConv2DTranspose) {
          own = static_cast<double>(k * k * filters) * static_cast<double>(NumElements(in));
          // Keras 'valid': out = in * s + max(k - s, 0), PyTorch's (in - 1) * s + k when k >= s.
          bool found = false;
          for (int64_t s = 1; s <= k && !found; ++s) {
            if (in[1] * s + k - s == out[1] && in[2] * s + k - s == out[2]) {
              e.stride = s;
              found = true;
            }
          }
          if (!found) Fail(info.model, layer, "only 'valid' transposed convolutions are supported");
        } else {
          own = static_cast<double>(depthwise ? k * k : k * k * cin) * out_elems;
          InferWindow(info, layer, e, in, true);
        }
        e.activation = FusedActivation(info, layer, own, last);
        break;
      }
      case LayerKind::kDense: {
        // Rank 3 only on token sequences: image tensors are stored channels-first.
        if (in.size() != 2 && (in.size() != 3 || !tokens)) {
          Fail(info.model, layer, "the executor runs dense layers on rank 2 (or rank 3 tokens)");
        }
        const int64_t weights = in.back() * out.back();
        if (layer.weights_read != layer.parameters) {
          if (layer.parameters != 0 || layer.weights_read != weights) {
            Fail(info.model, layer, "tied weights other than a bias-free head");
          }
          e.tied_to = TiedEmbedding(info, layer, in.back(), out.back());
        } else {
          e.use_bias = layer.parameters == weights + out.back();
          if (!e.use_bias && layer.parameters != weights) {
            Fail(info.model, layer, "parameter count does not match a dense layer");
          }
        }
        const int64_t rows = NumElements(in) / in.back();
        e.activation = FusedActivation(
            info, layer, static_cast<double>(rows) * static_cast<double>(weights), last);
        break;
      }
      case LayerKind::kEmbedding: {
        // (vocab + S) * H parameters: the token table and one position row per position.
        const int64_t hidden = out.back();
        if (layer.inputs[0] >= 0 || in.size() != 2 || layer.parameters % hidden != 0 ||
            layer.parameters / hidden - in[1] < 1) {
          Fail(info.model, layer, "not a token plus position embedding of the input ids");
        }
        e.vocab = layer.parameters / hidden - in[1];
        break;
      }
      case LayerKind::kLayerNorm:
        if (layer.parameters != 2 * out.back()) {
          Fail(info.model, layer, "parameter count does not match a layer norm");
        }
        break;
      case LayerKind::kMatMul:
        DecodeAttention(info, layer, e);
        break;
      case LayerKind::kActivation:
        e.activation = NamedActivation(info, layer, last);
        if (e.activation == Activation::kSoftmax && layer.inputs[0] >= 0 &&
            result[layer.inputs[0]].attention == AttentionPart::kScores) {
          e.attention = AttentionPart::kSoftmax;
          e.heads = result[layer.inputs[0]].heads;
          e.head_size = result[layer.inputs[0]].head_size;
        }
        break;
      case LayerKind::kMaxPool:
      case LayerKind::kAvgPool: {
        bool found = false;
        for (auto [k, s] : {std::pair<int64_t, int64_t>{2, 2}, {3, 2}}) {
          if (!found && in[1] >= k && in[2] >= k && WindowOut(in[1], k, s, false) == out[1] &&
              WindowOut(in[2], k, s, false) == out[2]) {
            e.kernel = k;
            e.stride = s;
            found = true;
          }
        }
        if (!found) Fail(info.model, layer, "neither a 2x2 nor a 3x3 stride-2 pool");
        break;
      }
      case LayerKind::kZeroPadding:
      case LayerKind::kCropping: {
        const int64_t rows = std::abs(out[1] - in[1]);
        const int64_t columns = std::abs(out[2] - in[2]);
        if (layer.kind == LayerKind::kZeroPadding) {
          e.pad_top = rows / 2;
          e.pad_bottom = rows - rows / 2;
          e.pad_left = columns / 2;
          e.pad_right = columns - columns / 2;
        } else {
          e.pad_bottom = rows;
          e.pad_right = columns;
        }
        break;
      }
      case LayerKind::kUpSampling:
        e.kernel = out[1] / in[1];
        if (out[1] != in[1] * e.kernel || out[2] != in[2] * e.kernel) {
          Fail(info.model, layer, "not an integer upsampling");
        }
        break;
      case LayerKind::kDropout:
        e.dropout_rate = info.model == "mobilenet" ? 1e-3 : 0.5;
        break;
      case LayerKind::kReshape:
        if (in.back() != out.back() || in.size() < 2) {
          Fail(info.model, layer, "the executor supports reshapes that keep the channel axis");
        }
        break;
      case LayerKind::kBatchNorm:
      case LayerKind::kGlobalAvgPool:
      case LayerKind::kConcat:
      case LayerKind::kAdd:
      case LayerKind::kFlatten:
        break;
    }
    if (tokens && e.activation == Activation::kSoftmax && e.attention != AttentionPart::kSoftmax) {
      Fail(info.model, layer, "a softmax on token activations other than attention's");
    }
    if (in.size() == 4 && layer.kind != LayerKind::kFlatten &&
        layer.kind != LayerKind::kGlobalAvgPool && layer.kind != LayerKind::kReshape &&
        e.attention != AttentionPart::kContext && out.size() != 4) {
      Fail(info.model, layer, "unexpected rank change");
    }
    result.push_back(std::move(e));
  }
  return result;
}

}  // namespace remat::exec
