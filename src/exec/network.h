// A zoo network as libtorch tensors: seeded parameters, the input batch and labels, and the
// kernels that compute one forward layer, the loss, or one layer's backward pass explicitly.
// Only src/exec includes libtorch.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "exec/layer_spec.h"
#include "zoo/registry.h"

namespace remat::exec {

// A layer's tensors: weight/bias (convolution, dense) or gamma/beta and the running
// statistics (batch norm). Undefined where the layer has none.
struct LayerTensors {
  at::Tensor weight;
  at::Tensor bias;
  at::Tensor running_mean;
  at::Tensor running_var;
};

// What a forward layer keeps besides its output, for its backward pass and for recomputation
// (docs/exec.md): batch norm's per-channel mean and inverse standard deviation of the first
// computation; dropout's seed (the mask is regenerated, never stored). Max-pooling keeps
// nothing: its backward recomputes the indices from the input.
struct ForwardState {
  bool computed = false;
  at::Tensor save_mean;
  at::Tensor save_invstd;
  uint64_t dropout_seed = 0;
};

// Image tensors are stored channels-first (NCHW): the zoo's (B, d1..dk, C) is (B, C, d1..dk).
// Rank-2 tensors are the same either way.
std::vector<int64_t> InternalShape(const Shape& zoo_shape);

class Network {
 public:
  // Parameters uniform in a He-style range from a generator seeded with `seed`; biases and
  // batch-norm affine parameters away from 0 and 1 so that their gradients are exercised.
  // The input batch is uniform in [-1, 1]; labels are uniform class ids per output position.
  Network(const ModelInfo& info, uint64_t seed);

  const ModelInfo& info() const { return info_; }
  int32_t size() const { return static_cast<int32_t>(layers_.size()); }
  const ExecLayer& layer(int32_t id) const { return layers_[id]; }
  const LayerTensors& tensors(int32_t id) const { return tensors_[id]; }
  LayerTensors& tensors(int32_t id) { return tensors_[id]; }
  // Trainable parameters of a layer in a fixed order (weight, bias) and their gradients.
  std::vector<at::Tensor> parameters(int32_t id) const;
  std::vector<at::Tensor>& gradients(int32_t id) { return gradients_[id]; }
  const std::vector<at::Tensor>& gradients(int32_t id) const { return gradients_[id]; }
  void ZeroGradients();

  const at::Tensor& input() const { return input_; }
  const at::Tensor& labels() const { return labels_; }  // int64, (B, 1, positions...)
  // Bytes of parameters (with batch-norm statistics), gradients, input and labels.
  int64_t parameter_bytes() const;
  int64_t gradient_bytes() const;
  int64_t input_bytes() const { return static_cast<int64_t>(input_.nbytes() + labels_.nbytes()); }

 private:
  ModelInfo info_;
  std::vector<ExecLayer> layers_;
  std::vector<LayerTensors> tensors_;
  std::vector<std::vector<at::Tensor>> gradients_;
  at::Tensor input_;
  at::Tensor labels_;
};

// Forward layer `id` on its inputs (in the layer's input order). `update_running` updates
// batch norm's running statistics (the first computation only); a recomputation reproduces
// the first computation's statistics and checks them. Works under autograd too (the
// reference step), where `params` require gradients.
at::Tensor ForwardLayer(const ExecLayer& layer, const LayerTensors& params,
                        const std::vector<at::Tensor>& inputs, ForwardState& state,
                        bool update_running);

// Per-sample loss, shape (B): the mean over output positions of -log p[label].
at::Tensor LossForward(const at::Tensor& probabilities, const at::Tensor& labels);
// Gradient of mean(per-sample loss) with respect to the probabilities, with the kernels and
// in the order that autograd uses for LossForward followed by a mean.
at::Tensor LossBackward(const at::Tensor& probabilities, const at::Tensor& labels);

// The vector-Jacobian product of layer `layer_id` with respect to its input at `position`,
// from that input, the layer's output and the gradient of its output only. With
// `parameter_gradients` non-null, the layer's parameter gradients are added into it
// (the caller passes them for one input position only). The result never aliases an
// argument.
at::Tensor InputGradient(const ExecLayer& layer, const LayerTensors& params, int32_t position,
                         const at::Tensor& input, const at::Tensor& output,
                         const at::Tensor& grad_output, const ForwardState& state,
                         std::vector<at::Tensor>* parameter_gradients);

// Parameter gradients of a layer that reads the network input (no gradient flows to it).
void ParameterGradientsFromNetworkInput(const ExecLayer& layer, const LayerTensors& params,
                                        const at::Tensor& network_input, const at::Tensor& output,
                                        const at::Tensor& grad_output, const ForwardState& state,
                                        std::vector<at::Tensor>& parameter_gradients);

}  // namespace remat::exec
