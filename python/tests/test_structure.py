"""Module structure of captured transformers (docs/design.md §1): the blocks
and contractions that the checkpoint-blocks and selective baselines read, and the default
strategy never costlier than checkpointing every block."""

from __future__ import annotations

import warnings

import pytest
import torch

import remat
import remat.torch

import hf_models

LAYERS = 3


def region_graph(name):
    """The remat graph of the model's largest compiled region (aot_eager: no Inductor)."""
    module, inputs = getattr(hf_models, name)(layers=LAYERS, batch=2)
    torch._dynamo.reset()
    backend = remat.torch.backend(budget="50%", compiler="aot_eager", time_limit_s=10)
    compiled = torch.compile(module, backend=backend, dynamic=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", remat.BudgetWarning)
        compiled(*inputs).backward()
    return max((r.graph for r in backend.plans), key=lambda g: g.size)


@pytest.mark.parametrize("name,prefix", [("gpt2", "transformer.h."), ("llama", "layers.")])
def test_blocks_are_the_layers_and_optimal_is_never_costlier_than_checkpointing_them(name,
                                                                                     prefix):
    graph = region_graph(name)
    forward = [n for n in graph.nodes if n.kind == remat.NodeKind.forward]
    blocks = sorted({n.block for n in forward if n.block})
    # The layers' paths (the part before the model's attribute varies with how Dynamo
    # reaches the module).
    assert len(blocks) == LAYERS
    assert sorted(int(b.rsplit(".", 1)[1]) for b in blocks) == list(range(LAYERS))
    assert all(b.rsplit(".", 1)[0].endswith(prefix.rstrip(".")) for b in blocks), blocks
    assert not any(n.block or n.contraction for n in graph.nodes
                   if n.kind != remat.NodeKind.forward)
    # Every layer has its projections (contractions) and its norms and activations (not).
    for block in blocks:
        kinds = {n.contraction for n in forward if n.block == block}
        assert kinds == {True, False}
    report = remat.plan(graph, budget="100%", strategies=["checkpoint-blocks", "selective"],
                        lower_bound=False)
    hand = report.row("checkpoint-blocks")
    # Checkpointing every layer holds its input alone across the forward pass: the peak falls
    # far below the no-rematerialization one (a layer norm's statistics, read only by
    # backward, are taken in forward; taken when backward begins they held every layer).
    assert hand.peak_bytes < 0.7 * report.no_remat_peak_bytes
    for row in (hand, report.row("selective")):
        at = remat.plan(graph, budget=row.peak_bytes, strategies=["optimal"], time_limit_s=10,
                        lower_bound=False)
        assert at.rows[0].fits
        assert at.rows[0].cost <= row.cost * (1 + 1e-12), row.strategy
