"""Models of the transformers library built from configs (random init, nothing downloaded):
GPT-2, Llama and Qwen2-MoE (causal LMs), BERT (an encoder, masked LM) and T5 (an
encoder-decoder), each trained on its own loss. Dropout is off so that compiled and eager
gradients compare (a compiled graph draws its random numbers differently from eager PyTorch).

Each builder returns ``(module, inputs)``: ``module(*inputs)`` returns the model's loss, so a
step is ``module(*inputs).backward()``.
"""

from __future__ import annotations

import torch
from torch import nn

VOCAB = 256


class OwnLoss(nn.Module):
    """A transformers model called with labels, returning its loss (the model's own)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, labels):
        return self.model(input_ids=input_ids, labels=labels).loss


def _tokens(batch: int, seq: int) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq))


def gpt2(layers: int = 2, width: int = 32, heads: int = 2, batch: int = 4, seq: int = 64,
         seed: int = 0, vocab: int = VOCAB):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, vocab_size=vocab,
                        n_positions=max(seq, 32), resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
    ids = _tokens(batch, seq)
    return OwnLoss(GPT2LMHeadModel(config)), (ids, ids)


def llama(layers: int = 2, width: int = 32, heads: int = 2, batch: int = 4, seq: int = 64,
          seed: int = 0, vocab: int = VOCAB):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
                         num_key_value_heads=max(1, heads // 2), intermediate_size=2 * width,
                         vocab_size=vocab, max_position_embeddings=max(seq, 32),
                         bos_token_id=0, eos_token_id=0, pad_token_id=0)
    ids = _tokens(batch, seq)
    return OwnLoss(LlamaForCausalLM(config)), (ids, ids)


def qwen2_moe(layers: int = 2, width: int = 32, heads: int = 2, batch: int = 4, seq: int = 64,
              seed: int = 0, vocab: int = VOCAB, experts: int = 8, top_k: int = 2,
              expert_width: int = 64, experts_implementation: str = "grouped_mm"):
    """A mixture of experts in every layer: ``experts`` experts of width ``expert_width``, each
    token routed to ``top_k`` of them, beside a shared expert as wide. ``experts_implementation``
    is transformers' option: its default ``"grouped_mm"`` (on the CPU in float32, under Dynamo,
    its opaque custom op ``transformers::grouped_mm_fallback``) and ``"batched_mm"`` trace
    into one graph; ``"eager"`` loops over the experts hit, found by ``nonzero``, whose
    data-dependent shape breaks Dynamo's graph."""
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

    torch.manual_seed(seed)
    config = Qwen2MoeConfig(num_hidden_layers=layers, hidden_size=width,
                            num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                            intermediate_size=2 * width, moe_intermediate_size=expert_width,
                            shared_expert_intermediate_size=expert_width, num_experts=experts,
                            num_experts_per_tok=top_k, vocab_size=vocab,
                            max_position_embeddings=max(seq, 32), bos_token_id=0,
                            eos_token_id=0, pad_token_id=0,
                            experts_implementation=experts_implementation)
    ids = _tokens(batch, seq)
    return OwnLoss(Qwen2MoeForCausalLM(config)), (ids, ids)


def bert(layers: int = 2, width: int = 32, heads: int = 2, batch: int = 4, seq: int = 64,
         seed: int = 0):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    config = BertConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
                        intermediate_size=2 * width, vocab_size=VOCAB,
                        max_position_embeddings=max(seq, 32), hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, pad_token_id=0)
    ids = _tokens(batch, seq)
    labels = ids.clone()
    labels[:, ::2] = -100  # only some positions are predicted, as in masked-LM training
    return OwnLoss(BertForMaskedLM(config)), (ids, labels)


def t5(layers: int = 2, width: int = 32, heads: int = 2, batch: int = 4, seq: int = 64,
       seed: int = 0):
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    config = T5Config(num_layers=layers, num_decoder_layers=layers, d_model=width,
                      d_kv=width // heads, num_heads=heads, d_ff=2 * width, vocab_size=VOCAB,
                      dropout_rate=0.0, decoder_start_token_id=0, pad_token_id=0,
                      eos_token_id=1)
    return OwnLoss(T5ForConditionalGeneration(config)), (_tokens(batch, seq),
                                                          _tokens(batch, seq // 2))
