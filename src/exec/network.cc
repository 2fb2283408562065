// Parameters, forward kernels and explicit backward kernels of the zoo's layer kinds. The
// backward kernels are the ATen functions autograd calls for the same forward ops, in the
// same order, so that a step run node by node reproduces autograd's arithmetic.
#include "exec/network.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "core/errors.h"
#include "exec/transformer_layers.h"

namespace remat::exec {
namespace {

// ATen weighs the new batch statistics by its momentum, Keras the old moving ones by its.
double BatchNormMomentum(const ExecLayer& layer) { return 1.0 - layer.momentum; }

at::Generator SeededGenerator(uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

at::Tensor Uniform(std::vector<int64_t> shape, double low, double high, at::Generator& gen) {
  return at::empty(shape, at::kFloat).uniform_(low, high, gen);
}

std::vector<int64_t> Sizes(const at::Tensor& t) { return t.sizes().vec(); }

bool IsConvolution(LayerKind kind) {
  return kind == LayerKind::kConv2D || kind == LayerKind::kDepthwiseConv2D ||
         kind == LayerKind::kConv2DTranspose;
}

int64_t Groups(const ExecLayer& layer) {
  return layer.kind == LayerKind::kDepthwiseConv2D ? layer.input_shapes[0][3] : 1;
}

at::Tensor Convolution(const ExecLayer& layer, const LayerTensors& p, const at::Tensor& x) {
  const bool transposed = layer.kind == LayerKind::kConv2DTranspose;
  return at::convolution(x, p.weight, p.bias, {layer.stride, layer.stride},
                         {layer.pad.top, layer.pad.left}, {1, 1}, transposed, {0, 0},
                         Groups(layer));
}

// Fused activations apply to the kernel's fresh output: ReLU in place (one buffer, as the
// planner counts it), softmax out of place (a transient second buffer; only on last layers).
at::Tensor ApplyFused(const ExecLayer& layer, at::Tensor y) {
  switch (layer.activation) {
    case Activation::kNone: return y;
    case Activation::kRelu: return at::relu_(y);
    case Activation::kSoftmax: return at::_softmax(y, 1, false);
    default:
      throw InputError(fmt::format("layer '{}': fused activation not supported", layer.name));
  }
}

// Gradient before a fused activation, from the activation's output.
at::Tensor FusedBackward(const ExecLayer& layer, const at::Tensor& output, const at::Tensor& grad) {
  switch (layer.activation) {
    case Activation::kNone: return grad;
    case Activation::kRelu: return at::threshold_backward(grad, output, 0);
    case Activation::kSoftmax: return at::_softmax_backward_data(grad, output, 1, at::kFloat);
    default:
      throw InputError(fmt::format("layer '{}': fused activation not supported", layer.name));
  }
}

}  // namespace

void KeepOrCheckStatistics(const ExecLayer& layer, const char* kind, const at::Tensor& mean,
                           const at::Tensor& invstd, ForwardState& state) {
  if (!state.computed) {
    state.save_mean = mean;
    state.save_invstd = invstd;
  } else if (!at::equal(mean, state.save_mean) || !at::equal(invstd, state.save_invstd)) {
    throw InternalError(fmt::format("layer '{}': recomputed {} statistics differ from the first "
                                    "computation", layer.name, kind));
  }
  state.computed = true;
}

namespace {

void Accumulate(std::vector<at::Tensor>& gradients, size_t index, const at::Tensor& g) {
  if (g.defined()) gradients.at(index).add_(g);
}

// Convolution backward for the gradient `g` before the activation. Returns the input gradient
// when `want_input`; adds weight and bias gradients when `parameter_gradients` is non-null.
at::Tensor ConvolutionBackward(const ExecLayer& layer, const LayerTensors& p, const at::Tensor& x,
                               const at::Tensor& g, bool want_input,
                               std::vector<at::Tensor>* parameter_gradients) {
  const bool params = parameter_gradients != nullptr;
  const bool has_bias = p.bias.defined();
  const std::array<bool, 3> mask = {want_input, params, params && has_bias};
  at::OptionalIntArrayRef bias_sizes = c10::nullopt;
  std::vector<int64_t> bias_shape;
  if (has_bias) {
    bias_shape = Sizes(p.bias);
    bias_sizes = bias_shape;
  }
  auto [gx, gw, gb] = at::convolution_backward(
      g, x, p.weight, bias_sizes, {layer.stride, layer.stride},
      {layer.pad.top, layer.pad.left}, {1, 1},
      layer.kind == LayerKind::kConv2DTranspose, {0, 0}, Groups(layer), mask);
  if (params) {
    Accumulate(*parameter_gradients, 0, gw);
    if (has_bias) Accumulate(*parameter_gradients, 1, gb);
  }
  return gx;
}

// Rank 3 (B, S, H) runs on the (B*S, H) rows: a view in and out, the kernel owns the output.
at::Tensor DenseForward(const LayerTensors& p, const at::Tensor& x) {
  if (x.dim() > 2) {
    std::vector<int64_t> out = Sizes(x);
    out.back() = p.weight.size(0);
    return DenseForward(p, x.reshape({-1, x.size(-1)})).view(out);
  }
  return p.bias.defined() ? at::addmm(p.bias, x, p.weight.t()) : at::mm(x, p.weight.t());
}

// autograd's mm_mat1_backward / mm_mat2_backward for x (row-major) and weight.t()
// (column-major), and the broadcast bias reduced by sum_to. Rank 3 through the rows' views
// (ViewBackward0 reshapes).
at::Tensor DenseBackward(const LayerTensors& p, const at::Tensor& x, const at::Tensor& g,
                         bool want_input, std::vector<at::Tensor>* parameter_gradients) {
  if (x.dim() > 2) {
    const at::Tensor gx = DenseBackward(p, x.reshape({-1, x.size(-1)}),
                                        g.reshape({-1, g.size(-1)}), want_input,
                                        parameter_gradients);
    return want_input ? gx.view(x.sizes()) : gx;
  }
  if (parameter_gradients != nullptr) {
    // Into the gradient buffer directly: a fresh g^T x would be a transient as large as the
    // weight (64 MiB for VGG16's fc2). Bitwise the same as adding mm's result to the buffer.
    parameter_gradients->at(0).addmm_(g.t(), x);
    if (p.bias.defined()) Accumulate(*parameter_gradients, 1, at::sum_to(g, p.bias.sizes()));
  }
  return want_input ? g.mm(p.weight) : at::Tensor();
}

at::Tensor DropoutMask(const at::Tensor& x, double rate, uint64_t seed) {
  at::Generator gen = SeededGenerator(seed);
  return at::empty_like(x).bernoulli_(1.0 - rate, gen).mul_(1.0 / (1.0 - rate));
}

std::vector<int64_t> MaxPoolIndicesArgs(const ExecLayer& layer) { return {layer.kernel, layer.kernel}; }

}  // namespace

std::vector<int64_t> InternalShape(const Shape& zoo_shape) {
  std::vector<int64_t> shape(zoo_shape.begin(), zoo_shape.end());
  if (shape.size() >= 3) {
    const int64_t channels = shape.back();
    shape.pop_back();
    shape.insert(shape.begin() + 1, channels);
  }
  return shape;
}

Network::Network(const ModelInfo& info, uint64_t seed) : info_(info), layers_(DecodeLayers(info)) {
  const bool tokens = layers_.front().kind == LayerKind::kEmbedding;
  if (info.input_shape.size() != 4 && !tokens) {
    throw InputError(fmt::format("{}: the executor runs image models and token models that "
                                 "start with an embedding", info.model));
  }
  at::Generator gen = SeededGenerator(seed);
  for (const ExecLayer& layer : layers_) {
    LayerTensors t;
    const Shape& in = layer.input_shapes[0];
    const Shape& out = layer.output_shape;
    switch (layer.kind) {
      case LayerKind::kConv2D:
      case LayerKind::kDepthwiseConv2D:
      case LayerKind::kConv2DTranspose: {
        const int64_t k = layer.kernel;
        const int64_t cin = in[3];
        const int64_t f = out[3];
        std::vector<int64_t> shape = layer.kind == LayerKind::kConv2D ? std::vector<int64_t>{f, cin, k, k}
                                     : layer.kind == LayerKind::kDepthwiseConv2D
                                         ? std::vector<int64_t>{cin, 1, k, k}
                                         : std::vector<int64_t>{cin, f, k, k};
        const int64_t fan_in = layer.kind == LayerKind::kDepthwiseConv2D ? k * k : k * k * cin;
        const double bound = std::sqrt(6.0 / static_cast<double>(fan_in));
        t.weight = Uniform(shape, -bound, bound, gen);
        if (layer.use_bias) t.bias = Uniform({f}, -0.1, 0.1, gen);
        break;
      }
      case LayerKind::kDense: {
        if (layer.tied_to >= 0) {
          t.weight = tensors_.at(layer.tied_to).weight;  // the same tensor: read, not owned
          break;
        }
        const double bound = std::sqrt(6.0 / static_cast<double>(in.back()));
        t.weight = Uniform({out.back(), in.back()}, -bound, bound, gen);
        if (layer.use_bias) t.bias = Uniform({out.back()}, -0.1, 0.1, gen);
        break;
      }
      case LayerKind::kBatchNorm: {
        const int64_t c = out.back();
        t.weight = Uniform({c}, 0.5, 1.5, gen);
        t.bias = Uniform({c}, -0.1, 0.1, gen);
        t.running_mean = at::zeros({c}, at::kFloat);
        t.running_var = at::ones({c}, at::kFloat);
        break;
      }
      case LayerKind::kLayerNorm: {
        const int64_t c = out.back();
        t.weight = Uniform({c}, 0.5, 1.5, gen);
        t.bias = Uniform({c}, -0.1, 0.1, gen);
        break;
      }
      case LayerKind::kEmbedding: {
        // Variance 1/H: the tied head's logits start near unit scale, whatever H.
        const double bound = std::sqrt(3.0 / static_cast<double>(out.back()));
        t.weight = Uniform({layer.vocab, out.back()}, -bound, bound, gen);
        t.position = Uniform({in.back(), out.back()}, -0.1, 0.1, gen);
        break;
      }
      default:
        break;
    }
    tensors_.push_back(std::move(t));
  }
  gradients_.resize(layers_.size());
  for (size_t id = 0; id < layers_.size(); ++id) {
    for (const at::Tensor& p : parameters(static_cast<int32_t>(id))) {
      gradients_[id].push_back(at::zeros_like(p));
    }
  }
  const at::TensorOptions ids = at::TensorOptions().dtype(at::kLong);
  if (tokens) {
    // int32 ids (the zoo's 4 bytes per token); next-token labels along the logits' last axis.
    loss_input_ = LossInput::kLogits;
    input_ = at::randint(layers_.front().vocab, info.input_shape, gen,
                         at::TensorOptions().dtype(at::kInt));
    std::vector<int64_t> label_shape = info.output_shape;
    const int64_t classes = label_shape.back();
    label_shape.back() = 1;
    labels_ = at::randint(classes, label_shape, gen, ids);
    return;
  }
  input_ = Uniform(InternalShape(info.input_shape), -1.0, 1.0, gen);
  // Labels: one class per output position, shaped for a gather along the class axis.
  std::vector<int64_t> label_shape = InternalShape(info.output_shape);
  const int64_t classes = label_shape[1];
  label_shape[1] = 1;
  labels_ = at::randint(classes, label_shape, gen, ids);
}

std::vector<at::Tensor> Network::parameters(int32_t id) const {
  std::vector<at::Tensor> result;
  if (layers_[id].tied_to >= 0) return result;
  const LayerTensors& t = tensors_[id];
  for (const at::Tensor* p : {&t.weight, &t.bias, &t.position}) {
    if (p->defined()) result.push_back(*p);
  }
  return result;
}

void Network::ZeroGradients() {
  for (auto& list : gradients_) {
    for (at::Tensor& g : list) g.zero_();
  }
}

int64_t Network::parameter_bytes() const {
  int64_t bytes = 0;
  for (int32_t id = 0; id < size(); ++id) {
    for (const at::Tensor& p : parameters(id)) bytes += static_cast<int64_t>(p.nbytes());
    const LayerTensors& t = tensors_[id];
    for (const at::Tensor* p : {&t.running_mean, &t.running_var}) {
      if (p->defined()) bytes += static_cast<int64_t>(p->nbytes());
    }
  }
  return bytes;
}

int64_t Network::gradient_bytes() const {
  int64_t bytes = 0;
  for (const auto& list : gradients_) {
    for (const at::Tensor& g : list) bytes += static_cast<int64_t>(g.nbytes());
  }
  return bytes;
}

at::Tensor ForwardLayer(const ExecLayer& layer, const LayerTensors& p,
                        const std::vector<at::Tensor>& inputs, ForwardState& state,
                        bool update_running) {
  const at::Tensor& x = inputs.at(0);
  switch (layer.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
      return ApplyFused(layer, Convolution(layer, p, x));
    case LayerKind::kDense:
      return ApplyFused(layer, DenseForward(p, x));
    case LayerKind::kBatchNorm: {
      auto [y, mean, invstd] = at::native_batch_norm(
          x, p.weight, p.bias, update_running ? p.running_mean : at::Tensor(),
          update_running ? p.running_var : at::Tensor(), true,
          BatchNormMomentum(layer), layer.epsilon);
      KeepOrCheckStatistics(layer, "batch-norm", mean, invstd, state);
      return y;
    }
    case LayerKind::kActivation:
      if (layer.attention == AttentionPart::kSoftmax) return MaskedSoftmaxForward(layer, x);
      switch (layer.activation) {
        case Activation::kRelu: return at::relu(x);
        case Activation::kRelu6: return at::hardtanh(x, 0, 6);
        case Activation::kSoftmax: return at::_softmax(x, 1, false);
        case Activation::kGelu: return at::gelu(x);
        case Activation::kNone: return x.clone();
      }
      break;
    case LayerKind::kMaxPool:
      return std::get<0>(at::max_pool2d_with_indices(x, MaxPoolIndicesArgs(layer),
                                                     {layer.stride, layer.stride}, {0, 0}, {1, 1},
                                                     false));
    case LayerKind::kAvgPool:
      return at::avg_pool2d(x, {layer.kernel, layer.kernel}, {layer.stride, layer.stride}, {0, 0},
                            false, true, c10::nullopt);
    case LayerKind::kGlobalAvgPool:
      return at::mean(x, {2, 3});
    case LayerKind::kZeroPadding:
      return at::constant_pad_nd(x, {layer.pad.left, layer.pad.right, layer.pad.top,
                                     layer.pad.bottom}, 0);
    case LayerKind::kCropping:
      // Negative padding: a copy of the kept window (the node owns its bytes).
      return at::constant_pad_nd(x, {-layer.pad.left, -layer.pad.right, -layer.pad.top,
                                     -layer.pad.bottom}, 0);
    case LayerKind::kUpSampling:
      return at::upsample_nearest2d(x, {x.size(2) * layer.upsampling,
                                        x.size(3) * layer.upsampling});
    case LayerKind::kConcat:
      return at::cat(inputs, 1);
    case LayerKind::kAdd: {
      at::Tensor sum = at::add(inputs[0], inputs[1]);
      for (size_t k = 2; k < inputs.size(); ++k) sum = at::add(sum, inputs[k]);
      return sum;
    }
    case LayerKind::kFlatten:
      return x.reshape({x.size(0), -1}).clone();
    case LayerKind::kReshape:
      return x.reshape(InternalShape(layer.output_shape)).clone();
    case LayerKind::kDropout: {
      if (state.dropout_seed == 0) throw InternalError("dropout without a seed");
      state.computed = true;
      return at::mul(x, DropoutMask(x, layer.dropout_rate, state.dropout_seed));
    }
    case LayerKind::kEmbedding:
      return EmbeddingForward(p, x);
    case LayerKind::kLayerNorm:
      return LayerNormForward(layer, p, x, state);
    case LayerKind::kMatMul:
      if (layer.attention == AttentionPart::kScores) return AttentionScoresForward(layer, x);
      if (layer.attention == AttentionPart::kContext) {
        return AttentionContextForward(layer, x, inputs.at(1));
      }
      break;
    default:
      break;
  }
  throw InputError(fmt::format("layer '{}': {} is not supported by the executor", layer.name,
                               LayerKindName(layer.kind)));
}

at::Tensor LossForward(LossInput kind, const at::Tensor& output, const at::Tensor& labels) {
  const int64_t batch = output.size(0);
  if (kind == LossInput::kLogits) {
    const int64_t axis = output.dim() - 1;
    const at::Tensor log_p = at::_log_softmax(output, axis, false);
    return at::neg(at::mean(at::gather(log_p, axis, labels).view({batch, -1}), {1}));
  }
  return at::neg(at::mean(at::log(at::gather(output, 1, labels)).view({batch, -1}), {1}));
}

at::Tensor LossBackward(LossInput kind, const at::Tensor& output, const at::Tensor& labels) {
  const int64_t batch = output.size(0);
  const bool logits = kind == LossInput::kLogits;
  const int64_t axis = logits ? output.dim() - 1 : 1;
  // The log-probabilities are recomputed from the logits (a transient of the output's size).
  const at::Tensor log_p = logits ? at::_log_softmax(output, axis, false) : at::Tensor();
  const at::Tensor picked = at::gather(logits ? log_p : output, axis, labels);
  const int64_t positions = picked.numel() / batch;
  // loss = mean(per_sample): MeanBackward0 spreads 1 / B.
  at::Tensor g = at::ones({}, at::kFloat).expand({batch}) / batch;
  g = g.neg();                                                   // NegBackward0
  g = g.unsqueeze(1).expand({batch, positions}) / positions;     // MeanBackward1 over dim 1
  g = g.reshape(picked.sizes());                                 // ViewBackward0
  if (logits) {
    g = at::zeros_like(log_p).scatter_add_(axis, labels, g);     // GatherBackward0
    return at::_log_softmax_backward_data(g, log_p, axis, at::kFloat);  // LogSoftmaxBackward0
  }
  g = g.div(picked);                                             // LogBackward0
  return at::zeros_like(output).scatter_add_(1, labels, g);      // GatherBackward0
}

at::Tensor InputGradient(const ExecLayer& layer, const LayerTensors& p, int32_t position,
                         const std::vector<at::Tensor>& inputs, const at::Tensor& y,
                         const at::Tensor& grad, const ForwardState& state,
                         std::vector<at::Tensor>* parameter_gradients) {
  const at::Tensor& x = inputs.at(position);
  switch (layer.kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
      return ConvolutionBackward(layer, p, x, FusedBackward(layer, y, grad), true,
                                 parameter_gradients);
    case LayerKind::kDense:
      return DenseBackward(p, x, FusedBackward(layer, y, grad), true, parameter_gradients);
    case LayerKind::kBatchNorm: {
      const bool params = parameter_gradients != nullptr;
      auto [gx, gw, gb] = at::native_batch_norm_backward(
          grad, x, p.weight, p.running_mean, p.running_var, state.save_mean, state.save_invstd,
          true, layer.epsilon, {true, params, params});
      if (params) {
        Accumulate(*parameter_gradients, 0, gw);
        Accumulate(*parameter_gradients, 1, gb);
      }
      return gx;
    }
    case LayerKind::kActivation:
      if (layer.attention == AttentionPart::kSoftmax) return MaskedSoftmaxBackward(layer, y, grad);
      switch (layer.activation) {
        case Activation::kRelu: return at::threshold_backward(grad, y, 0);
        case Activation::kRelu6: return at::hardtanh_backward(grad, x, 0, 6);
        case Activation::kSoftmax: return at::_softmax_backward_data(grad, y, 1, at::kFloat);
        case Activation::kGelu: return at::gelu_backward(grad, x);
        case Activation::kNone: return grad.clone();
      }
      break;
    case LayerKind::kMaxPool: {
      // The indices are not kept by the forward node: recomputed here from the input.
      const std::vector<int64_t> k = MaxPoolIndicesArgs(layer);
      const at::Tensor indices = std::get<1>(
          at::max_pool2d_with_indices(x, k, {layer.stride, layer.stride}, {0, 0}, {1, 1}, false));
      return at::max_pool2d_with_indices_backward(grad, x, k, {layer.stride, layer.stride},
                                                  {0, 0}, {1, 1}, false, indices);
    }
    case LayerKind::kAvgPool:
      return at::avg_pool2d_backward(grad, x, {layer.kernel, layer.kernel},
                                     {layer.stride, layer.stride}, {0, 0}, false, true,
                                     c10::nullopt);
    case LayerKind::kGlobalAvgPool:
      // mean_backward: sum_backward (unsqueeze, expand), then divide by the reduced count.
      return grad.unsqueeze(2).unsqueeze(3).expand(x.sizes()) / (x.size(2) * x.size(3));
    case LayerKind::kZeroPadding:
      return at::constant_pad_nd(grad, {-layer.pad.left, -layer.pad.right, -layer.pad.top,
                                        -layer.pad.bottom}, 0);
    case LayerKind::kCropping:
      return at::constant_pad_nd(grad, {layer.pad.left, layer.pad.right, layer.pad.top,
                                        layer.pad.bottom}, 0);
    case LayerKind::kUpSampling:
      return at::upsample_nearest2d_backward(grad, {grad.size(2), grad.size(3)}, Sizes(x));
    case LayerKind::kConcat: {
      int64_t offset = 0;
      for (int32_t k = 0; k < position; ++k) offset += layer.input_shapes[k].back();
      return grad.narrow(1, offset, x.size(1)).clone();
    }
    case LayerKind::kAdd:
      return grad.clone();
    case LayerKind::kFlatten:
    case LayerKind::kReshape:
      return grad.reshape(x.sizes()).clone();
    case LayerKind::kDropout:
      return at::mul(grad, DropoutMask(x, layer.dropout_rate, state.dropout_seed));
    case LayerKind::kLayerNorm:
      return LayerNormBackward(p, x, grad, state, parameter_gradients);
    case LayerKind::kMatMul:
      if (layer.attention == AttentionPart::kScores) return AttentionScoresBackward(layer, x, grad);
      if (layer.attention == AttentionPart::kContext) {
        // The other factor is an input this backward node reads (the product rule's edge).
        if (!inputs.at(0).defined() || !inputs.at(1).defined()) {
          throw InternalError(fmt::format("layer '{}': the attention context's gradient needs "
                                          "both inputs", layer.name));
        }
        return AttentionContextBackward(layer, position, inputs[0], inputs[1], grad);
      }
      break;
    default:
      break;
  }
  throw InputError(fmt::format("layer '{}': {} is not supported by the executor", layer.name,
                               LayerKindName(layer.kind)));
}

void ParameterGradientsFromNetworkInput(const ExecLayer& layer, const LayerTensors& p,
                                        const at::Tensor& network_input, const at::Tensor& output,
                                        const at::Tensor& grad, const ForwardState& state,
                                        std::vector<at::Tensor>& parameter_gradients) {
  if (parameter_gradients.empty()) return;
  if (IsConvolution(layer.kind)) {
    ConvolutionBackward(layer, p, network_input, FusedBackward(layer, output, grad), false,
                        &parameter_gradients);
  } else if (layer.kind == LayerKind::kDense) {
    DenseBackward(p, network_input, FusedBackward(layer, output, grad), false,
                  &parameter_gradients);
  } else if (layer.kind == LayerKind::kEmbedding) {
    EmbeddingParameterGradients(p, network_input, grad, parameter_gradients);
  } else if (layer.kind == LayerKind::kBatchNorm) {
    auto [gx, gw, gb] = at::native_batch_norm_backward(
        grad, network_input, p.weight, p.running_mean, p.running_var, state.save_mean,
        state.save_invstd, true, layer.epsilon, {false, true, true});
    Accumulate(parameter_gradients, 0, gw);
    Accumulate(parameter_gradients, 1, gb);
  } else {
    throw InputError(fmt::format("layer '{}': parameters on the network input", layer.name));
  }
}

}  // namespace remat::exec
