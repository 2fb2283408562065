// A zoo network as libtorch tensors: seeded parameters, the input batch and labels, and the
// kernels that compute one forward layer, the loss, or one layer's backward pass explicitly.
// Only src/exec includes libtorch.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "exec/layer_spec.h"
#include "model/model_info.h"

namespace remat::exec {

// A layer's tensors: weight/bias (convolution, dense), gamma/beta (layer norm), gamma/beta and
// the running statistics (batch norm), the token table `weight` and the (S, H) `position`
// table (embedding). A tied dense layer's `weight` is its embedding's token table (the same
// tensor, owned by the embedding). Undefined where the layer has none.
struct LayerTensors {
  at::Tensor weight;
  at::Tensor bias;
  at::Tensor running_mean;
  at::Tensor running_var;
  at::Tensor position;
};

// What a forward layer keeps besides its output, for its backward pass and for recomputation
// (docs/exec.md): batch norm's per-channel mean and inverse standard deviation of the first
// computation, layer norm's per-row ones (B, S, 1); dropout's seed (the mask is regenerated,
// never stored). Max-pooling keeps nothing: its backward recomputes the indices from the input.
struct ForwardState {
  bool computed = false;
  at::Tensor save_mean;
  at::Tensor save_invstd;
  uint64_t dropout_seed = 0;
};

// Keeps a normalization's statistics on its first computation; a recomputation must reproduce
// them bit for bit (InternalError naming the layer and `kind` otherwise). Marks `state`
// computed.
void KeepOrCheckStatistics(const ExecLayer& layer, const char* kind, const at::Tensor& mean,
                           const at::Tensor& invstd, ForwardState& state);

// Image tensors are stored channels-first (NCHW): the zoo's (B, d1..dk, C) is (B, C, d1..dk).
// Rank-2 tensors are the same either way. Token sequences (the transformer) are not converted.
std::vector<int64_t> InternalShape(const Shape& zoo_shape);

// What the loss reads from the last layer: class probabilities along axis 1 (image models end
// in a softmax; NCHW) or logits along the last axis (the transformer's (B, S, vocab) head, a
// per-token cross-entropy through log-softmax).
enum class LossInput { kProbabilities, kLogits };

class Network {
 public:
  // Parameters uniform in a He-style range from a generator seeded with `seed`; biases and
  // batch/layer-norm affine parameters away from 0 and 1 so that their gradients are
  // exercised; the token table with variance 1/H, positions in [-0.1, 0.1]. The input batch
  // is uniform in [-1, 1] (images) or uniform int32 token ids; labels are uniform class
  // (token) ids per output position.
  Network(const ModelInfo& info, uint64_t seed);

  const ModelInfo& info() const { return info_; }
  int32_t size() const { return static_cast<int32_t>(layers_.size()); }
  const ExecLayer& layer(int32_t id) const { return layers_[id]; }
  const LayerTensors& tensors(int32_t id) const { return tensors_[id]; }
  LayerTensors& tensors(int32_t id) { return tensors_[id]; }
  // Trainable parameters of a layer in a fixed order (weight, bias, position) and their
  // gradients; none for a tied layer (its weight is its embedding's).
  std::vector<at::Tensor> parameters(int32_t id) const;
  // The layer whose gradients a layer's weight gradients go to: its own, or the embedding a
  // tied head reads.
  int32_t parameter_owner(int32_t id) const {
    return layers_[id].tied_to >= 0 ? layers_[id].tied_to : id;
  }
  LossInput loss_input() const { return loss_input_; }
  std::vector<at::Tensor>& gradients(int32_t id) { return gradients_[id]; }
  const std::vector<at::Tensor>& gradients(int32_t id) const { return gradients_[id]; }
  void ZeroGradients();

  const at::Tensor& input() const { return input_; }
  // int64, shaped for a gather along the class axis: (B, 1, positions...) or (B, S, 1).
  const at::Tensor& labels() const { return labels_; }
  // Bytes of parameters (with batch-norm statistics), gradients, input and labels.
  int64_t parameter_bytes() const;
  int64_t gradient_bytes() const;
  int64_t input_bytes() const { return static_cast<int64_t>(input_.nbytes() + labels_.nbytes()); }

 private:
  ModelInfo info_;
  std::vector<ExecLayer> layers_;
  std::vector<LayerTensors> tensors_;
  std::vector<std::vector<at::Tensor>> gradients_;
  LossInput loss_input_ = LossInput::kProbabilities;
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

// Per-sample loss, shape (B): the mean over output positions of -log p[label], p the
// probabilities or log_softmax of the logits.
at::Tensor LossForward(LossInput kind, const at::Tensor& output, const at::Tensor& labels);
// Gradient of mean(per-sample loss) with respect to the last layer's output, with the kernels
// and in the order that autograd uses for LossForward followed by a mean.
at::Tensor LossBackward(LossInput kind, const at::Tensor& output, const at::Tensor& labels);

// The vector-Jacobian product of `layer` with respect to its input at `position`, from that
// input (`inputs[position]`), the layer's output and the gradient of its output; a layer with
// backward_reads_inputs also reads its other inputs (defined in `inputs` exactly then).
// With `parameter_gradients` non-null, the layer's parameter gradients are added into it
// (the caller passes them for one input position only; a tied head's go to its embedding's).
// The result never aliases an argument.
at::Tensor InputGradient(const ExecLayer& layer, const LayerTensors& params, int32_t position,
                         const std::vector<at::Tensor>& inputs, const at::Tensor& output,
                         const at::Tensor& grad_output, const ForwardState& state,
                         std::vector<at::Tensor>* parameter_gradients);

// Parameter gradients of a layer that reads the network input (no gradient flows to it).
void ParameterGradientsFromNetworkInput(const ExecLayer& layer, const LayerTensors& params,
                                        const at::Tensor& network_input, const at::Tensor& output,
                                        const at::Tensor& grad_output, const ForwardState& state,
                                        std::vector<at::Tensor>& parameter_gradients);

}  // namespace remat::exec
