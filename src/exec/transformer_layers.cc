// Transformer kernels: every backward spells out autograd's derivative formulas of PyTorch
// 1.13 (derivatives.yaml: bmm, masked_fill, mul, _softmax, native_layer_norm, embedding,
// and the view/transpose/reshape/slice chains between them) on the same operand layouts.
#include "exec/transformer_layers.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/errors.h"

namespace remat::exec {
namespace {

// Part `part` (0 query, 1 key, 2 value) of the fused (B, S, 3H) tensor as contiguous
// (B * heads, S, d). The forward and backward kernels both build it this way, so that the
// matrices bmm sees, strides included, are the ones autograd saved.
at::Tensor Heads(const ExecLayer& layer, const at::Tensor& qkv, int64_t part) {
  const int64_t batch = qkv.size(0);
  const int64_t seq = qkv.size(1);
  const int64_t hidden = layer.heads * layer.head_size;
  return qkv.narrow(2, part * hidden, hidden)
      .view({batch, seq, layer.heads, layer.head_size})
      .transpose(1, 2)
      .reshape({batch * layer.heads, seq, layer.head_size});
}

// Adds a per-head gradient (B * heads, S, d) into part `part` of a (B, S, 3H) gradient: the
// backward of Heads (reshape, transpose, view, then narrow's zero-padded slice_backward). The
// sum with autograd's other zero-padded parts is exact, and 0 + g is g but for the sign of a
// zero, which autograd's sum of three zero-padded tensors also makes +0.
void AddHeadGradient(const ExecLayer& layer, at::Tensor& grad_qkv, int64_t part,
                     const at::Tensor& grad_heads) {
  const int64_t batch = grad_qkv.size(0);
  const int64_t seq = grad_qkv.size(1);
  const int64_t hidden = layer.heads * layer.head_size;
  grad_qkv.narrow(2, part * hidden, hidden)
      .view({batch, seq, layer.heads, layer.head_size})
      .add_(grad_heads.reshape({batch, layer.heads, seq, layer.head_size}).transpose(1, 2));
}

// True above the diagonal: position i may not attend to j > i.
at::Tensor CausalMask(int64_t seq) {
  return at::ones({seq, seq}, at::TensorOptions().dtype(at::kBool)).triu_(1);
}

double Scale(const ExecLayer& layer) {
  return 1.0 / std::sqrt(static_cast<double>(layer.head_size));
}

}  // namespace

at::Tensor EmbeddingForward(const LayerTensors& p, const at::Tensor& tokens) {
  // Position ids are 0..S-1, so the position lookup is the whole table, broadcast over B.
  return at::add(at::embedding(p.weight, tokens), p.position);
}

void EmbeddingParameterGradients(const LayerTensors& p, const at::Tensor& tokens,
                                 const at::Tensor& grad,
                                 std::vector<at::Tensor>& parameter_gradients) {
  // EmbeddingBackward0 (padding_idx -1, no frequency scaling, dense) returns a zeroed table of
  // the vocabulary's size with row k = 0 + g_i + g_j + ... over the positions i < j < ... of
  // token k, in position order; autograd adds it to the gradient (the tied head's part
  // already there). The same sums are built here on the rows of the tokens that occur only, a
  // (distinct tokens, H) transient instead of (vocab, H) (154 MB for GPT-2 small), and each
  // added to its row: the same additions in the same order, so the same bits.
  const int64_t hidden = grad.size(-1);
  const auto [distinct, row_of] = at::_unique(tokens.flatten(), /*sorted=*/true,
                                              /*return_inverse=*/true);
  at::Tensor rows = at::zeros({distinct.numel(), hidden}, grad.options());
  rows.index_add_(0, row_of, grad.reshape({-1, hidden}));
  parameter_gradients.at(0).index_add_(0, distinct, rows);
  // The engine's sum_to of the broadcast add's gradient for the position table.
  parameter_gradients.at(1).add_(at::sum_to(grad, p.position.sizes()));
}

at::Tensor LayerNormForward(const ExecLayer& layer, const LayerTensors& p, const at::Tensor& x,
                            ForwardState& state) {
  auto [y, mean, rstd] =
      at::native_layer_norm(x, {x.size(-1)}, p.weight, p.bias, layer.epsilon);
  KeepOrCheckStatistics(layer, "layer-norm", mean, rstd, state);
  return y;
}

at::Tensor LayerNormBackward(const LayerTensors& p, const at::Tensor& x, const at::Tensor& grad,
                             const ForwardState& state,
                             std::vector<at::Tensor>* parameter_gradients) {
  const bool params = parameter_gradients != nullptr;
  auto [gx, gw, gb] = at::native_layer_norm_backward(grad, x, {x.size(-1)}, state.save_mean,
                                                     state.save_invstd, p.weight, p.bias,
                                                     {true, params, params});
  if (params) {
    parameter_gradients->at(0).add_(gw);
    parameter_gradients->at(1).add_(gb);
  }
  return gx;
}

at::Tensor AttentionScoresForward(const ExecLayer& layer, const at::Tensor& qkv) {
  const at::Tensor q = Heads(layer, qkv, 0);
  const at::Tensor k = Heads(layer, qkv, 1);
  const int64_t seq = qkv.size(1);
  return at::bmm(q, k.transpose(1, 2)).view({qkv.size(0), layer.heads, seq, seq});
}

at::Tensor AttentionScoresBackward(const ExecLayer& layer, const at::Tensor& qkv,
                                   const at::Tensor& grad) {
  const at::Tensor q = Heads(layer, qkv, 0);
  const at::Tensor k = Heads(layer, qkv, 1);
  const int64_t seq = qkv.size(1);
  const at::Tensor g = grad.reshape({qkv.size(0) * layer.heads, seq, seq});
  // BmmBackward0 of bmm(q, kT), kT = k.transpose(1, 2): self grad.bmm(kT^T), mat2 q^T.bmm(grad)
  // (then TransposeBackward0 turns kT's gradient into k's).
  const at::Tensor kt = k.transpose(1, 2);
  at::Tensor grad_qkv = at::zeros_like(qkv);
  AddHeadGradient(layer, grad_qkv, 0, g.bmm(kt.transpose(1, 2)));
  AddHeadGradient(layer, grad_qkv, 1, q.transpose(1, 2).bmm(g).transpose(1, 2));
  return grad_qkv;
}

at::Tensor MaskedSoftmaxForward(const ExecLayer& layer, const at::Tensor& scores) {
  at::Tensor s = at::mul(scores, Scale(layer));
  s.masked_fill_(CausalMask(scores.size(-1)), -std::numeric_limits<double>::infinity());
  return at::_softmax(s, -1, false);
}

at::Tensor MaskedSoftmaxBackward(const ExecLayer& layer, const at::Tensor& probabilities,
                                 const at::Tensor& grad) {
  // SoftmaxBackward0, MaskedFillBackward0 (zero where filled), MulBackward1 (times the scale).
  at::Tensor g = at::_softmax_backward_data(grad, probabilities, -1, at::kFloat);
  g.masked_fill_(CausalMask(probabilities.size(-1)), 0);
  return at::mul(g, Scale(layer));
}

at::Tensor AttentionContextForward(const ExecLayer& layer, const at::Tensor& probabilities,
                                   const at::Tensor& qkv) {
  const int64_t batch = qkv.size(0);
  const int64_t seq = qkv.size(1);
  const at::Tensor p = probabilities.view({batch * layer.heads, seq, seq});
  // The merge of the heads copies (reshape of a transposed view): the output owns its bytes.
  return at::bmm(p, Heads(layer, qkv, 2))
      .view({batch, layer.heads, seq, layer.head_size})
      .transpose(1, 2)
      .reshape({batch, seq, layer.heads * layer.head_size});
}

at::Tensor AttentionContextBackward(const ExecLayer& layer, int32_t position,
                                    const at::Tensor& probabilities, const at::Tensor& qkv,
                                    const at::Tensor& grad) {
  const int64_t batch = qkv.size(0);
  const int64_t seq = qkv.size(1);
  // Backward of the head merge: view, transpose, and a contiguous copy as ViewBackward0's
  // reshape makes it.
  const at::Tensor g = grad.reshape({batch, seq, layer.heads, layer.head_size})
                           .transpose(1, 2)
                           .reshape({batch * layer.heads, seq, layer.head_size});
  if (position == 0) {
    // BmmBackward0, self: grad.bmm(v^T); the probabilities' view back to (B, heads, S, S).
    const at::Tensor v = Heads(layer, qkv, 2);
    return g.bmm(v.transpose(1, 2)).view({batch, layer.heads, seq, seq});
  }
  if (position != 1) throw InternalError("attention context has two inputs");
  // BmmBackward0, mat2: P^T.bmm(grad).
  const at::Tensor p = probabilities.view({batch * layer.heads, seq, seq});
  at::Tensor grad_qkv = at::zeros_like(qkv);
  AddHeadGradient(layer, grad_qkv, 2, p.transpose(1, 2).bmm(g));
  return grad_qkv;
}

}  // namespace remat::exec
