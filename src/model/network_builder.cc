// Shape inference, parameter counts and the analytic FLOP model of each layer kind.
#include "model/network_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/errors.h"

namespace remat {
namespace {

double Elements(const Shape& shape) { return static_cast<double>(NumElements(shape)); }

double ActivationFlops(Activation activation, const Shape& out) {
  return activation == Activation::kNone ? 0.0 : Elements(out);
}

}  // namespace

NetworkBuilder::NetworkBuilder(std::string name, Shape input_shape)
    : name_(std::move(name)), input_shape_(std::move(input_shape)) {
  if (input_shape_.empty()) throw InputError(fmt::format("{}: the input has no dimensions", name_));
  for (int64_t dim : input_shape_) {
    if (dim < 1) {
      throw InputError(
          fmt::format("{}: input shape {} has a dimension < 1", name_, FormatShape(input_shape_)));
    }
  }
  NumElements(input_shape_);  // rejects an input too large to address
}

const Shape& NetworkBuilder::shape(Tensor tensor) const {
  if (tensor == kInput) return input_shape_;
  if (tensor < 0 || tensor >= static_cast<Tensor>(layers_.size())) {
    throw InternalError(fmt::format("{}: tensor {} does not exist", name_, tensor));
  }
  return layers_[tensor].output_shape;
}

void NetworkBuilder::Fail(const std::string& layer_name, const std::string& what) const {
  throw InputError(fmt::format("{}: layer '{}': {}", name_, layer_name, what));
}

const Shape& NetworkBuilder::RequireRank(const std::string& layer_name, Tensor x,
                                         size_t rank) const {
  const Shape& s = shape(x);
  if (s.size() != rank) {
    Fail(layer_name, fmt::format("expects a rank-{} input, got shape {}", rank, FormatShape(s)));
  }
  return s;
}

int64_t NetworkBuilder::OutputLength(const std::string& layer_name, int64_t in, int64_t kernel,
                                     int64_t stride, Padding padding) const {
  if (kernel < 1 || stride < 1) Fail(layer_name, "kernel and stride must be >= 1");
  // Keras: 'same' gives ceil(in / stride); 'valid' gives floor((in - k) / stride) + 1.
  const int64_t out =
      padding == Padding::kSame ? (in + stride - 1) / stride : (in - kernel) / stride + 1;
  if (out < 1 || (padding == Padding::kValid && in < kernel)) {
    Fail(layer_name, fmt::format("a {}x{} window does not fit an input of size {}: the input "
                                 "resolution is too small for this network",
                                 kernel, kernel, in));
  }
  return out;
}

Shape NetworkBuilder::Window(Layer& layer, const Shape& in, int64_t kernel, int64_t stride,
                             Padding padding, int64_t channels) const {
  const int64_t rows = OutputLength(layer.name, in[1], kernel, stride, padding);
  const int64_t columns = OutputLength(layer.name, in[2], kernel, stride, padding);
  layer.kernel = kernel;
  layer.stride = stride;
  layer.padding = padding;
  if (padding == Padding::kSame) {
    // Keras (TensorFlow) 'same': max((out - 1) * stride + kernel - in, 0) zeros, the odd one
    // at the bottom/right.
    const int64_t total_rows = std::max<int64_t>((rows - 1) * stride + kernel - in[1], 0);
    const int64_t total_columns = std::max<int64_t>((columns - 1) * stride + kernel - in[2], 0);
    layer.pad = {.top = total_rows / 2,
                 .bottom = total_rows - total_rows / 2,
                 .left = total_columns / 2,
                 .right = total_columns - total_columns / 2};
  }
  return {in[0], rows, columns, channels};
}

NetworkBuilder::Tensor NetworkBuilder::Push(Layer layer) {
  for (const Layer& existing : layers_) {
    if (existing.name == layer.name) {
      throw InternalError(fmt::format("{}: duplicate layer name '{}'", name_, layer.name));
    }
  }
  for (Tensor input : layer.inputs) shape(input);  // InternalError on a dangling id
  NumElements(layer.output_shape);                 // InputError when too large
  layer.block = block_;
  layers_.push_back(std::move(layer));
  return static_cast<Tensor>(layers_.size()) - 1;
}

NetworkBuilder::Tensor NetworkBuilder::Conv2D(const std::string& name, Tensor x, int64_t filters,
                                              int64_t kernel, ConvOptions options) {
  const Shape in = RequireRank(name, x, 4);
  Layer layer{.name = name,
              .kind = LayerKind::kConv2D,
              .inputs = {x},
              .use_bias = options.use_bias,
              .activation = options.activation};
  const Shape out = Window(layer, in, kernel, options.stride, options.padding, filters);
  const int64_t params = kernel * kernel * in[3] * filters + (options.use_bias ? filters : 0);
  layer.output_shape = out;
  layer.parameters = layer.trainable_parameters = layer.weights_read = params;
  layer.flops = static_cast<double>(kernel * kernel * in[3]) * Elements(out) +
                ActivationFlops(options.activation, out);
  return Push(std::move(layer));
}

NetworkBuilder::Tensor NetworkBuilder::DepthwiseConv2D(const std::string& name, Tensor x,
                                                       int64_t kernel, ConvOptions options) {
  const Shape in = RequireRank(name, x, 4);
  Layer layer{.name = name,
              .kind = LayerKind::kDepthwiseConv2D,
              .inputs = {x},
              .use_bias = options.use_bias,
              .activation = options.activation};
  const Shape out = Window(layer, in, kernel, options.stride, options.padding, in[3]);
  const int64_t params = kernel * kernel * in[3] + (options.use_bias ? in[3] : 0);
  layer.output_shape = out;
  layer.parameters = layer.trainable_parameters = layer.weights_read = params;
  layer.flops = static_cast<double>(kernel * kernel) * Elements(out) +
                ActivationFlops(options.activation, out);
  return Push(std::move(layer));
}

NetworkBuilder::Tensor NetworkBuilder::Conv2DTranspose(const std::string& name, Tensor x,
                                                       int64_t filters, int64_t kernel,
                                                       ConvOptions options) {
  const Shape in = RequireRank(name, x, 4);
  if (kernel < 1 || options.stride < 1) Fail(name, "kernel and stride must be >= 1");
  // Keras deconv_output_length: 'same' in * s; 'valid' in * s + max(k - s, 0).
  auto length = [&](int64_t n) {
    return options.padding == Padding::kSame
               ? n * options.stride
               : n * options.stride + std::max<int64_t>(kernel - options.stride, 0);
  };
  const Shape out = {in[0], length(in[1]), length(in[2]), filters};
  const int64_t params = kernel * kernel * in[3] * filters + (options.use_bias ? filters : 0);
  const double flops = static_cast<double>(kernel * kernel * filters) * Elements(in) +
                       ActivationFlops(options.activation, out);
  // `pad` stays 0: a transposed convolution's padding mode is not zeros around its input.
  return Push({.name = name,
               .kind = LayerKind::kConv2DTranspose,
               .inputs = {x},
               .output_shape = out,
               .parameters = params,
               .trainable_parameters = params,
               .weights_read = params,
               .flops = flops,
               .kernel = kernel,
               .stride = options.stride,
               .padding = options.padding,
               .use_bias = options.use_bias,
               .activation = options.activation});
}

NetworkBuilder::Tensor NetworkBuilder::Dense(const std::string& name, Tensor x, int64_t units,
                                             DenseOptions options) {
  const Shape in = shape(x);
  if (in.size() < 2) Fail(name, fmt::format("expects a rank >= 2 input, got {}", FormatShape(in)));
  Shape out = in;
  out.back() = units;
  const int64_t cin = in.back();
  const int64_t rows = NumElements(in) / cin;
  const int64_t weights = cin * units + (options.use_bias ? units : 0);
  const int32_t tied_to = options.tied_to.value_or(-1);
  if (options.tied_to) {
    const bool table =
        tied_to >= 0 && tied_to < static_cast<Tensor>(layers_.size()) &&
        layers_[tied_to].kind == LayerKind::kEmbedding && layers_[tied_to].vocab == units &&
        layers_[tied_to].output_shape.back() == cin;
    if (!table) {
      Fail(name, fmt::format("tied weights must be the token table of an embedding with {} rows "
                             "of width {}", units, cin));
    }
    if (options.use_bias) Fail(name, "a tied layer has no bias");
  }
  const int64_t owned = options.tied_to ? 0 : weights;
  const double flops = static_cast<double>(rows) * static_cast<double>(cin * units) +
                       ActivationFlops(options.activation, out);
  return Push({.name = name,
               .kind = LayerKind::kDense,
               .inputs = {x},
               .output_shape = out,
               .parameters = owned,
               .trainable_parameters = owned,
               .weights_read = weights,
               .flops = flops,
               .use_bias = options.use_bias,
               .activation = options.activation,
               .tied_to = tied_to});
}

NetworkBuilder::Tensor NetworkBuilder::BatchNorm(const std::string& name, Tensor x,
                                                 double epsilon, double momentum) {
  const Shape in = shape(x);
  const int64_t channels = in.back();
  // gamma and beta are trained; the moving mean and variance are not (Keras counts all four).
  return Push({.name = name,
               .kind = LayerKind::kBatchNorm,
               .inputs = {x},
               .output_shape = in,
               .parameters = 4 * channels,
               .trainable_parameters = 2 * channels,
               .weights_read = 4 * channels,
               .flops = 4.0 * Elements(in),
               .epsilon = epsilon,
               .momentum = momentum});
}

NetworkBuilder::Tensor NetworkBuilder::LayerNorm(const std::string& name, Tensor x,
                                                 double epsilon) {
  const Shape in = shape(x);
  const int64_t channels = in.back();
  return Push({.name = name,
               .kind = LayerKind::kLayerNorm,
               .inputs = {x},
               .output_shape = in,
               .parameters = 2 * channels,
               .trainable_parameters = 2 * channels,
               .weights_read = 2 * channels,
               .flops = 4.0 * Elements(in),
               .epsilon = epsilon});
}

NetworkBuilder::Tensor NetworkBuilder::Activate(const std::string& name, Tensor x,
                                                Activation activation) {
  const Shape in = shape(x);
  return Push({.name = name,
               .kind = LayerKind::kActivation,
               .inputs = {x},
               .output_shape = in,
               .flops = ActivationFlops(activation, in),
               .activation = activation});
}

NetworkBuilder::Tensor NetworkBuilder::MaxPool(const std::string& name, Tensor x, int64_t pool,
                                               PoolOptions options) {
  const Shape in = RequireRank(name, x, 4);
  const int64_t stride = options.stride == 0 ? pool : options.stride;
  Layer layer{.name = name, .kind = LayerKind::kMaxPool, .inputs = {x}};
  layer.output_shape = Window(layer, in, pool, stride, options.padding, in[3]);
  return Push(std::move(layer));
}

NetworkBuilder::Tensor NetworkBuilder::AvgPool(const std::string& name, Tensor x, int64_t pool,
                                               PoolOptions options) {
  Tensor id = MaxPool(name, x, pool, options);
  layers_[id].kind = LayerKind::kAvgPool;
  return id;
}

NetworkBuilder::Tensor NetworkBuilder::GlobalAvgPool(const std::string& name, Tensor x) {
  const Shape in = RequireRank(name, x, 4);
  return Push({.name = name,
               .kind = LayerKind::kGlobalAvgPool,
               .inputs = {x},
               .output_shape = {in[0], in[3]}});
}

NetworkBuilder::Tensor NetworkBuilder::ZeroPad(const std::string& name, Tensor x, int64_t top,
                                               int64_t bottom, int64_t left, int64_t right) {
  const Shape in = RequireRank(name, x, 4);
  if (top < 0 || bottom < 0 || left < 0 || right < 0) Fail(name, "negative padding");
  return Push({.name = name,
               .kind = LayerKind::kZeroPadding,
               .inputs = {x},
               .output_shape = {in[0], in[1] + top + bottom, in[2] + left + right, in[3]},
               .pad = {.top = top, .bottom = bottom, .left = left, .right = right}});
}

NetworkBuilder::Tensor NetworkBuilder::Crop(const std::string& name, Tensor x, int64_t top,
                                            int64_t bottom, int64_t left, int64_t right) {
  const Shape in = RequireRank(name, x, 4);
  if (top < 0 || bottom < 0 || left < 0 || right < 0) Fail(name, "negative cropping");
  if (top + bottom >= in[1] || left + right >= in[2]) {
    Fail(name, fmt::format("cropping ({}, {}, {}, {}) leaves nothing of {}", top, bottom, left,
                           right, FormatShape(in)));
  }
  return Push({.name = name,
               .kind = LayerKind::kCropping,
               .inputs = {x},
               .output_shape = {in[0], in[1] - top - bottom, in[2] - left - right, in[3]},
               .pad = {.top = top, .bottom = bottom, .left = left, .right = right}});
}

NetworkBuilder::Tensor NetworkBuilder::UpSample(const std::string& name, Tensor x, int64_t factor) {
  const Shape in = RequireRank(name, x, 4);
  if (factor < 1) Fail(name, "the upsampling factor must be >= 1");
  return Push({.name = name,
               .kind = LayerKind::kUpSampling,
               .inputs = {x},
               .output_shape = {in[0], in[1] * factor, in[2] * factor, in[3]},
               .upsampling = factor});
}

NetworkBuilder::Tensor NetworkBuilder::Concat(const std::string& name,
                                              const std::vector<Tensor>& xs) {
  if (xs.size() < 2) Fail(name, "concatenation needs at least two inputs");
  Shape out = shape(xs[0]);
  for (size_t k = 1; k < xs.size(); ++k) {
    const Shape& s = shape(xs[k]);
    if (s.size() != out.size() || !std::equal(s.begin(), s.end() - 1, out.begin())) {
      Fail(name, fmt::format("inputs of shapes {} and {} differ outside the channel axis",
                             FormatShape(shape(xs[0])), FormatShape(s)));
    }
    out.back() += s.back();
  }
  return Push({.name = name, .kind = LayerKind::kConcat, .inputs = xs, .output_shape = out});
}

NetworkBuilder::Tensor NetworkBuilder::Add(const std::string& name, const std::vector<Tensor>& xs) {
  if (xs.size() < 2) Fail(name, "addition needs at least two inputs");
  const Shape out = shape(xs[0]);
  for (size_t k = 1; k < xs.size(); ++k) {
    if (shape(xs[k]) != out) {
      Fail(name, fmt::format("inputs of shapes {} and {} cannot be added", FormatShape(out),
                             FormatShape(shape(xs[k]))));
    }
  }
  return Push({.name = name,
               .kind = LayerKind::kAdd,
               .inputs = xs,
               .output_shape = out,
               .flops = static_cast<double>(xs.size() - 1) * Elements(out)});
}

NetworkBuilder::Tensor NetworkBuilder::Flatten(const std::string& name, Tensor x) {
  const Shape in = shape(x);
  const int64_t batch = in[0];
  return Push({.name = name,
               .kind = LayerKind::kFlatten,
               .inputs = {x},
               .output_shape = {batch, NumElements(in) / batch}});
}

NetworkBuilder::Tensor NetworkBuilder::Reshape(const std::string& name, Tensor x,
                                               const Shape& dims) {
  const Shape in = shape(x);
  Shape out = {in[0]};
  out.insert(out.end(), dims.begin(), dims.end());
  if (NumElements(out) != NumElements(in)) {
    Fail(name, fmt::format("cannot reshape {} to {}", FormatShape(in), FormatShape(out)));
  }
  return Push({.name = name, .kind = LayerKind::kReshape, .inputs = {x}, .output_shape = out});
}

NetworkBuilder::Tensor NetworkBuilder::Dropout(const std::string& name, Tensor x, double rate) {
  if (!(rate >= 0 && rate < 1)) Fail(name, fmt::format("dropout rate {} is not in [0, 1)", rate));
  return Push({.name = name,
               .kind = LayerKind::kDropout,
               .inputs = {x},
               .output_shape = shape(x),
               .dropout_rate = rate});
}

NetworkBuilder::Tensor NetworkBuilder::MatMul(const std::string& name, Tensor a, Tensor b) {
  const Shape sa = shape(a);
  const Shape sb = shape(b);
  if (sa.size() < 2 || sa.size() != sb.size() ||
      !std::equal(sa.begin(), sa.end() - 2, sb.begin()) || sa[sa.size() - 1] != sb[sb.size() - 2]) {
    Fail(name, fmt::format("cannot multiply {} by {}", FormatShape(sa), FormatShape(sb)));
  }
  Shape out = sa;
  out.back() = sb.back();
  const double flops = Elements(out) * static_cast<double>(sa.back());  // batch * M * N * K
  return Push({.name = name,
               .kind = LayerKind::kMatMul,
               .inputs = {a, b},
               .output_shape = out,
               .flops = flops,
               .backward_reads_inputs = true});
}

NetworkBuilder::Tensor NetworkBuilder::Embedding(const std::string& name, Tensor tokens,
                                                 int64_t vocab, int64_t hidden) {
  const Shape in = RequireRank(name, tokens, 2);
  const int64_t params = (vocab + in[1]) * hidden;  // token table plus one row per position
  return Push({.name = name,
               .kind = LayerKind::kEmbedding,
               .inputs = {tokens},
               .output_shape = {in[0], in[1], hidden},
               .parameters = params,
               .trainable_parameters = params,
               // a lookup reads one token row and one position row per output vector
               .weights_read = 2 * in[0] * in[1] * hidden,
               .flops = 0,
               .vocab = vocab});
}

NetworkBuilder::Tensor NetworkBuilder::AttentionScores(const std::string& name, Tensor qkv,
                                                       int64_t heads) {
  const Shape in = RequireRank(name, qkv, 3);
  if (heads < 1 || in[2] % (3 * heads) != 0) {
    Fail(name, fmt::format("the fused query/key/value width {} is not 3 x heads ({}) x head size",
                           in[2], heads));
  }
  const int64_t hidden = in[2] / 3;
  const Shape out = {in[0], heads, in[1], in[1]};
  // heads * (S x S dot products of length H / heads) per sample = S * S * H
  const double flops =
      static_cast<double>(in[0]) * static_cast<double>(in[1] * in[1]) * static_cast<double>(hidden);
  return Push({.name = name,
               .kind = LayerKind::kMatMul,
               .inputs = {qkv},
               .output_shape = out,
               .flops = flops,
               .attention = AttentionPart::kScores,
               .heads = heads,
               .head_size = hidden / heads});
}

NetworkBuilder::Tensor NetworkBuilder::AttentionSoftmax(const std::string& name, Tensor scores) {
  if (scores < 0 || layers_.at(scores).attention != AttentionPart::kScores) {
    Fail(name, "the attention softmax reads attention scores");
  }
  const Layer& s = layers_[scores];
  return Push({.name = name,
               .kind = LayerKind::kActivation,
               .inputs = {scores},
               .output_shape = s.output_shape,
               .flops = ActivationFlops(Activation::kSoftmax, s.output_shape),
               .activation = Activation::kSoftmax,
               .attention = AttentionPart::kSoftmax,
               .heads = s.heads,
               .head_size = s.head_size});
}

NetworkBuilder::Tensor NetworkBuilder::AttentionContext(const std::string& name, Tensor probs,
                                                        Tensor qkv, int64_t heads) {
  const Shape p = RequireRank(name, probs, 4);
  const Shape in = RequireRank(name, qkv, 3);
  if (heads < 1 || in[2] % (3 * heads) != 0) {
    Fail(name, fmt::format("the fused query/key/value width {} is not 3 x heads ({}) x head size",
                           in[2], heads));
  }
  const int64_t hidden = in[2] / 3;
  if (p != Shape{in[0], heads, in[1], in[1]}) {
    Fail(name, fmt::format("attention probabilities {} do not match {} with {} heads",
                           FormatShape(p), FormatShape(in), heads));
  }
  const double flops =
      static_cast<double>(in[0]) * static_cast<double>(in[1] * in[1]) * static_cast<double>(hidden);
  return Push({.name = name,
               .kind = LayerKind::kMatMul,
               .inputs = {probs, qkv},
               .output_shape = {in[0], in[1], hidden},
               .flops = flops,
               .backward_reads_inputs = true,  // d/dP = grad V^T, d/dV = P^T grad
               .attention = AttentionPart::kContext,
               .heads = heads,
               .head_size = hidden / heads});
}

}  // namespace remat
