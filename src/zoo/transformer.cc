// A GPT-2 style decoder: token and position embedding, pre-layer-norm blocks of causal
// self-attention and a 4x MLP with residual adds, a final layer norm and a tied output head.
#include <fmt/format.h>

#include "zoo/transformer.h"

namespace remat {

NetworkBuilder BuildTransformer(int64_t batch, const TransformerConfig& config) {
  using Tensor = NetworkBuilder::Tensor;
  NetworkBuilder net("transformer", {batch, config.seq_length});
  const Tensor embedding =
      net.Embedding("embedding", NetworkBuilder::kInput, config.vocab, config.hidden);
  Tensor x = embedding;
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    const std::string h = fmt::format("h{}_", layer);
    net.SetBlock(fmt::format("h{}", layer));
    Tensor y = net.LayerNorm(h + "ln_1", x);
    const Tensor qkv = net.Dense(h + "attn_qkv", y, 3 * config.hidden);
    // The causal mask and the 1/sqrt(d) scale are folded into the softmax.
    y = net.AttentionScores(h + "attn_scores", qkv, config.heads);
    y = net.AttentionSoftmax(h + "attn_softmax", y);
    y = net.AttentionContext(h + "attn_context", y, qkv, config.heads);
    y = net.Dense(h + "attn_proj", y, config.hidden);
    x = net.Add(h + "attn_add", {x, y});
    y = net.LayerNorm(h + "ln_2", x);
    y = net.Dense(h + "mlp_fc", y, 4 * config.hidden);
    y = net.Activate(h + "mlp_gelu", y, Activation::kGelu);
    y = net.Dense(h + "mlp_proj", y, config.hidden);
    x = net.Add(h + "mlp_add", {x, y});
  }
  net.SetBlock("");
  x = net.LayerNorm("ln_f", x);
  // GPT-2 ties the output projection to the token embedding: it reads, not owns, the weights.
  net.Dense("lm_head", x, config.vocab, {.use_bias = false, .tied_to = embedding});
  return net;
}

}  // namespace remat
