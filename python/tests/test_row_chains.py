"""Row chains (an MLP's linear layers and elementwise operations) in chunks of tokens
(remat/torch/row_chains.py, split.py)."""

import copy
import warnings

import torch
import torch.nn.functional as F
from torch import nn

import hf_models
import remat.torch
from remat.torch.row_chains import row_chains
from remat.torch.split import chains_of, chunk_counts, split_chains
from test_split import _dynamo_graph


class WideMLPs(nn.Module):
    """Residual blocks of a gated MLP 8 times as wide as the model, and a mean-squared loss:
    no vocabulary, the MLPs' intermediates set the peak."""

    def __init__(self, width: int = 16, blocks: int = 2, other: bool = False,
                 dropout: float = 0.0):
        super().__init__()
        self.gates = nn.ModuleList(nn.Linear(width, 8 * width) for _ in range(blocks))
        self.ups = nn.ModuleList(nn.Linear(width, 8 * width, bias=False) for _ in range(blocks))
        self.downs = nn.ModuleList(nn.Linear(8 * width, width) for _ in range(blocks))
        self.other, self.dropout = other, dropout

    def forward(self, x, y):
        for gate, up, down in zip(self.gates, self.ups, self.downs):
            inner = F.silu(gate(x)) * up(x)
            if self.other:  # a tensor from outside the chain
                inner = inner * torch.sigmoid(x.sum(-1, keepdim=True))
            if self.dropout:
                inner = F.dropout(inner, self.dropout, self.training)
            x = x + down(inner)
        return F.mse_loss(x, y)


def _inputs(seed: int = 0, rows: int = 40):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(2, rows // 2, 16, generator=generator),
            torch.randn(2, rows // 2, 16, generator=generator))


def test_each_mlp_is_a_row_chain_and_attention_is_not():
    model, inputs = hf_models.llama(layers=2, width=32, batch=2, seq=16)
    gm, _ = _dynamo_graph(model, *inputs)
    chains = row_chains(gm)
    # One a layer: gate, silu, up, the product, down; from the post-attention norm's output.
    assert len(chains) == 2
    for chain in chains:
        assert [str(getattr(n.target, "__name__", n.target)) for n in chain.nodes] == \
            ["linear", "silu", "linear", "mul", "linear"]
        assert chain.rows == 32 and chain.widest_bytes == 32 * 64 * 4
        assert "post_attention_layernorm" not in chain.source.name


def test_a_chain_reads_nothing_from_outside_it_and_draws_nothing_at_random():
    torch.manual_seed(0)
    assert len(row_chains(_dynamo_graph(WideMLPs(), *_inputs())[0])) == 2
    assert row_chains(_dynamo_graph(WideMLPs(other=True), *_inputs())[0]) == []
    assert row_chains(_dynamo_graph(WideMLPs(dropout=0.1), *_inputs())[0]) == []


def test_chunk_counts_keep_every_chains_chunks_no_wider_than_the_widest():
    model, inputs = hf_models.llama(layers=1, width=32, batch=2, seq=16, vocab=1024)
    gm, _ = _dynamo_graph(model, *inputs)
    chains = chains_of(gm)
    # The logits (32 x 1024 floats) are 16 times the MLP's widest (32 x 64 floats).
    assert [c.widest_bytes for c in chains] == [32 * 1024 * 4, 32 * 64 * 4]
    assert chunk_counts(chains, 8) == [8, 1]
    assert chunk_counts(chains, 32) == [32, 2]
    assert chunk_counts(chains, 64) == [32, 4]  # at most one chunk a row


def test_the_chunked_mlps_give_the_whole_ones_loss_and_gradients():
    torch.manual_seed(0)
    gm, example = _dynamo_graph(WideMLPs(), *_inputs(rows=40))
    params = [x for x in example if isinstance(x, torch.Tensor) and x.requires_grad]
    split = split_chains(gm, 3)  # 40 rows in 14, 13 and 13
    linears = [n for n in split.graph.nodes if n.target is torch._C._nn.linear]
    assert len(linears) == 2 * 3 * 3
    whole, part = gm(*example)[0], split(*example)[0]
    torch.testing.assert_close(part, whole, rtol=1e-6, atol=1e-7)
    for a, b in zip(torch.autograd.grad(part, params), torch.autograd.grad(whole, params)):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_below_the_whole_floor_the_mlps_run_in_chunks_and_meet_the_budget():
    torch.manual_seed(0)
    model = WideMLPs(width=16, blocks=2)
    inputs = _inputs(rows=256)
    reference = copy.deepcopy(model)
    planned = remat.torch.wrap(model, budget="25%", time_limit_s=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", remat.BudgetWarning)  # the budget is met
        loss = planned(*inputs)
    loss.backward()
    (region,) = planned.plans
    assert region.chunks > 1 and region.within_budget
    whole_chunks, whole_peak, _ = region.split_attempts[0]
    assert whole_chunks == 1 and whole_peak > region.plan.budget_bytes
    expected = reference(*inputs)
    expected.backward()
    largest = max(p.grad.abs().max() for p in reference.parameters())
    for p, q in zip(model.parameters(), reference.parameters()):
        assert (p.grad - q.grad).abs().max() <= 1e-5 * largest


class NormedMLP(nn.Module):
    """A Llama block's MLP: an RMS norm, a gated MLP twice as wide, and the residual."""

    def __init__(self, width: int = 128):
        super().__init__()
        self.norm = nn.RMSNorm(width)
        self.gate = nn.Linear(width, 2 * width, bias=False)
        self.up = nn.Linear(width, 2 * width, bias=False)
        self.down = nn.Linear(2 * width, width, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def test_chunks_with_the_sums_planned_out_of_place_where_in_place_gets_no_lower():
    # Counted in place, each weight's gradient sum is held from the first chunk's backward
    # on, beside the second chunk's activations: 2 chunks peak above the whole region.
    # Counted as sums of their own, a plan can form each chunk's product late, holding the
    # chunks' small inputs of it instead, and the 2 chunks peak below the whole region
    # (0.7-0.8x in 10 to 30 s).
    torch.manual_seed(0)
    model = NormedMLP()
    reference = copy.deepcopy(model)
    x = torch.randn(2, 64, 128)
    backend = remat.torch.backend(budget="40%", time_limit_s=10)
    compiled = torch.compile(model, backend=backend, dynamic=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", remat.BudgetWarning)  # below the floor of 2 chunks
        compiled(x).square().sum().backward()
    (region,) = backend.plans
    by_chunks = {}
    for chunks, peak, _cost in region.split_attempts:
        by_chunks.setdefault(chunks, []).append(peak)
    whole_peak = by_chunks[1][0]
    in_place, out_of_place = by_chunks[2]
    assert in_place > whole_peak  # the chunks alone do not help here
    assert region.chunks == 2 and region.in_place_sums == 0
    assert region.plan.predicted_peak_bytes == out_of_place < whole_peak
    reference(x).square().sum().backward()
    largest = max(p.grad.abs().max() for p in reference.parameters())
    for p, q in zip(model.parameters(), reference.parameters()):
        assert (p.grad - q.grad).abs().max() <= 1e-5 * largest
