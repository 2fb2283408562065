"""The tangents stay live (remat/torch/tangents.py; docs/python.md, "The tangents stay live"):
the bound's value on a hand graph, never above the peak of a schedule that computes the loss
node once, never above a measured step, and the budget it refuses; a schedule that frees the
tangents read as the program that holds them."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import remat
import remat.torch
from remat import _core
from remat.torch.tangents import hold_tangents, least_peak_bound

from measure import peak_bytes_of

F_, L_, B_ = _core.NodeKind.forward, _core.NodeKind.loss, _core.NodeKind.backward


def hand_graph() -> _core.Graph:
    """a -> b -> L (the tangents, 100 B); c reads b (80 B), e reads c, d reads e and L.
    At c's computation c, b and the tangents are live: 80 + 10 + 100 = 190 B, where one node
    with its inputs gives at most d + e + L = 10 + 5 + 100 = 115 B."""
    nodes = [_core.Node("a", F_, 1.0, 10), _core.Node("b", F_, 1.0, 10),
             _core.Node("tangents", L_, 0.0, 100), _core.Node("c", B_, 1.0, 80),
             _core.Node("e", B_, 1.0, 5), _core.Node("d", B_, 1.0, 10)]
    edges = [(0, 1), (1, 2), (1, 3), (3, 4), (4, 5), (2, 5)]
    return _core.Graph(nodes, edges)


def schedules_computing_the_loss_once(graph: _core.Graph, budget: int):
    for name in _core.strategy_names():
        if not _core.strategy_applies(name, graph):
            continue
        row = _core.run_strategy(name, graph, budget, time_limit_s=5)
        if row.schedule is None:
            continue
        sim = _core.simulate(graph, row.schedule)
        if sim.evaluations_per_node[graph.loss] == 1:
            yield name, sim


def test_the_bound_on_a_hand_graph_counts_the_tangents_beside_a_node_that_does_not_read_them():
    graph = hand_graph()
    assert _core.minimum_peak_lower_bound(graph) == 115
    bound, proof = least_peak_bound(graph)
    assert bound == 190 and "tangents" in proof and "'d'" in proof
    seen = 0
    for name, sim in schedules_computing_the_loss_once(graph, 10**6):
        assert sim.peak_bytes >= bound, name
        seen += 1
    assert seen >= 3


def test_a_schedule_that_frees_the_tangents_is_read_as_the_program_that_holds_them():
    graph = hand_graph()
    # Frees the tangents after their computation and computes them again for d, from b: in
    # remat's model it peaks at 115 B, below the bound.
    R = [[0], [1], [2], [3], [4], [2, 5]]
    S = [[], [0], [1], [1], [1, 3], [1, 4]]
    freeing = _core.Schedule(graph, R, S)
    before = _core.simulate(graph, freeing)
    assert before.evaluations_per_node[2] == 2 and before.peak_bytes == 115
    held = hold_tangents(graph, freeing)
    assert _core.check_schedule(graph, held) == []
    after = _core.simulate(graph, held)
    assert after.evaluations_per_node[2] == 1
    assert [sorted(stage) for stage in held.R] == [[0], [1], [2], [3], [4], [5]]
    assert all(2 in held.S[t] for t in (3, 4, 5))
    # b was held for the recomputation only: no longer, so the program peaks where c computes
    # beside b and the tangents, at the bound (b held as well would make it 195 B).
    assert all(1 not in held.S[t] for t in (4, 5)) and 1 in held.S[3]
    assert after.peak_bytes == least_peak_bound(graph)[0] == 190
    # A schedule that already holds them is returned as it is.
    assert hold_tangents(graph, held) is held


def test_without_a_loss_node_the_bound_is_remats_own():
    kind = _core.NodeKind.unlabeled
    graph = _core.Graph([_core.Node("a", kind, 1.0, 10), _core.Node("b", kind, 1.0, 30)],
                        [(0, 1)])
    assert least_peak_bound(graph) == (40, "one operation's output together with its inputs")


class LogitsModel(nn.Module):
    """A language-model head that returns its logits with the loss, as transformers' models
    do: autograd hands backward a zero tangent of the logits' size."""

    def __init__(self, vocab: int = 4096, width: int = 16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        logits = self.head(self.embed(ids))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), ids.view(-1))
        return loss, logits


def compiled_logits_model(budget: str, **options):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = LogitsModel()
    ids = torch.randint(0, 4096, (8, 128))
    backend = remat.torch.backend(budget=budget, compiler="aot_eager", time_limit_s=10,
                                  **options)
    compiled = torch.compile(model, backend=backend, dynamic=False)

    def step():
        model.zero_grad(set_to_none=True)
        loss, _logits = compiled(ids)
        loss.backward()
    return backend, step


def test_the_bound_holds_on_a_captured_region_and_below_its_measured_step():
    backend, step = compiled_logits_model("100%")
    step()
    graph = backend.plans[-1].graph
    bound, proof = least_peak_bound(graph)
    logits = 8 * 128 * 4096 * 4
    tangents = graph.nodes[graph.loss].bytes
    assert tangents >= logits and "tangents" in proof
    # The loss node is an input of every node up to its last reader (tangent_edges), so
    # remat's own bound sees the tangents: at least the logits' gradient beside them.
    last = max(graph.succs(graph.loss))
    assert all(graph.loss in graph.preds(v) for v in range(graph.loss + 1, last + 1))
    assert bound == _core.minimum_peak_lower_bound(graph) >= tangents + logits
    for name, sim in schedules_computing_the_loss_once(graph, 10**12):
        assert sim.peak_bytes >= bound, name
    # Measured: the tangents are real allocations (the bound fails without them).
    assert peak_bytes_of(step) >= bound


def test_a_budget_below_the_bound_is_refused_with_the_tangents_named():
    backend, step = compiled_logits_model("100%")
    step()
    graph = backend.plans[-1].graph
    bound, _ = least_peak_bound(graph)
    between = bound - graph.nodes[graph.loss].bytes // 2
    backend, step = compiled_logits_model(str(between), strict=True)
    # torch.compile wraps a backend's error.
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as failure:
        step()
    error = failure.value.inner_exception
    assert isinstance(error, remat.InfeasibleBudgetError)
    assert "tangents, which backward reads until its node" in str(error)
    # Without strict the region runs its least-peak schedule, never below the bound, and the
    # warning says what proves the bound.
    backend, step = compiled_logits_model(str(between))
    with pytest.warns(remat.BudgetWarning, match="tangents, which backward reads"):
        step()
    region = backend.plans[-1]
    assert region.plan.status == "least-peak"
    assert region.plan.predicted_peak_bytes >= bound
