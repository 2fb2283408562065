// Forward and explicit backward kernels of the transformer's layers (embedding, layer norm,
// causal multi-head attention) from ATen ops. Each backward is the chain of kernels autograd
// runs for the forward ops, with the same operand layouts, so a step is bit-exact with it.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "exec/layer_spec.h"
#include "exec/network.h"

namespace remat::exec {

// Token plus position embedding: weight[tokens] + position, (B, S, H) from (B, S) int32 ids.
at::Tensor EmbeddingForward(const LayerTensors& params, const at::Tensor& tokens);
// Adds the token-table gradient (embedding_dense_backward) and the position-table gradient
// (the broadcast add's sum over the batch) into `parameter_gradients` (weight, position).
void EmbeddingParameterGradients(const LayerTensors& params, const at::Tensor& tokens,
                                 const at::Tensor& grad_output,
                                 std::vector<at::Tensor>& parameter_gradients);

// Layer norm over the last axis (eps 1e-5, GPT-2's). The first computation keeps the per-row
// mean and inverse standard deviation in `state`; a recomputation must reproduce them bit for
// bit (InternalError otherwise).
at::Tensor LayerNormForward(const ExecLayer& layer, const LayerTensors& params,
                            const at::Tensor& x, ForwardState& state);
// native_layer_norm_backward from the kept statistics; adds gamma and beta gradients when
// `parameter_gradients` is non-null.
at::Tensor LayerNormBackward(const LayerTensors& params, const at::Tensor& x,
                             const at::Tensor& grad_output, const ForwardState& state,
                             std::vector<at::Tensor>* parameter_gradients);

// Q K^T per head from the fused (B, S, 3H) qkv: (B, heads, S, S), unscaled.
at::Tensor AttentionScoresForward(const ExecLayer& layer, const at::Tensor& qkv);
// Gradient with respect to qkv: (B, S, 3H), the query and key parts filled, the value part 0.
at::Tensor AttentionScoresBackward(const ExecLayer& layer, const at::Tensor& qkv,
                                   const at::Tensor& grad_output);

// softmax(masked_fill(scores * 1/sqrt(head size), future positions, -inf)) over the last axis.
at::Tensor MaskedSoftmaxForward(const ExecLayer& layer, const at::Tensor& scores);
// From the probabilities (the layer's output) and their gradient only.
at::Tensor MaskedSoftmaxBackward(const ExecLayer& layer, const at::Tensor& probabilities,
                                 const at::Tensor& grad_output);

// P V per head, heads merged back: (B, S, H).
at::Tensor AttentionContextForward(const ExecLayer& layer, const at::Tensor& probabilities,
                                   const at::Tensor& qkv);
// Gradient with respect to input `position`: 0 the probabilities (grad V^T, reads qkv),
// 1 qkv ((B, S, 3H), only the value part non-zero: P^T grad, reads the probabilities).
at::Tensor AttentionContextBackward(const ExecLayer& layer, int32_t position,
                                    const at::Tensor& probabilities, const at::Tensor& qkv,
                                    const at::Tensor& grad_output);

}  // namespace remat::exec
