"""The tangents stay live (remat/torch/tangents.py; docs/design.md §8):
the bound with each tangent live until its own last reader, on hand graphs never above a
schedule's peak and on a captured region never above a measured step, the budget it refuses,
and a schedule that computes the loss node again read as the program that does not."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import remat
import remat.torch
from remat import _core
from remat.torch.tangents import hold_tangents, least_peak_bound, tangent_edges

from measure import peak_bytes_of

F_, L_, B_ = _core.NodeKind.forward, _core.NodeKind.loss, _core.NodeKind.backward


def hand_graph() -> _core.Graph:
    """a -> b -> L -> t (a tangent, 100 B); c reads a (80 B), e reads c, d reads e and t. t is
    live from its arrival to d, so at c's computation c, a and t are: 80 + 10 + 100 = 190 B,
    where one node with its inputs alone gives at most d + e + t = 10 + 5 + 100 = 115 B."""
    nodes = [_core.Node("a", F_, 1.0, 10), _core.Node("b", F_, 1.0, 10),
             _core.Node("loss", L_, 0.0, 0), _core.Node("t", B_, 0.0, 100),
             _core.Node("c", B_, 1.0, 80), _core.Node("e", B_, 1.0, 5),
             _core.Node("d", B_, 1.0, 10)]
    edges = [(0, 1), (1, 2), (2, 3), (0, 4), (4, 5), (5, 6), (3, 6)]
    return _core.Graph(nodes, edges)


def schedules_that_run(graph: _core.Graph, budget: int):
    """The strategies' schedules that compute the loss node and each tangent once: those the
    backend can emit (it rejects the others)."""
    once = [graph.loss, *graph.succs(graph.loss)]
    for name in _core.strategy_names():
        if not _core.strategy_applies(name, graph):
            continue
        row = _core.run_strategy(name, graph, budget, time_limit_s=5)
        if row.schedule is None:
            continue
        sim = _core.simulate(graph, row.schedule)
        if all(sim.evaluations_per_node[v] == 1 for v in once):
            yield name, sim


def count_schedules_at_or_above(graph: _core.Graph, bound: int, budget: int = 10**6) -> int:
    """Asserts that no schedule that runs peaks below ``bound``; how many were checked."""
    seen = 0
    for name, sim in schedules_that_run(graph, budget):
        assert sim.peak_bytes >= bound, name
        seen += 1
    return seen


def test_each_tangent_counts_until_its_own_last_reader():
    """a -> L -> t1 (100 B, read by b) and t2 (1 B, read by d, last); b -> c -> d. At c, t2 is
    live but t1 is not: c + b + t2 = 50 + 20 + 1 = 71 B, where one lumped node for both
    tangents, held until d, would make it 170 B."""
    nodes = [_core.Node("a", F_, 1.0, 10), _core.Node("loss", L_, 0.0, 0),
             _core.Node("t1", B_, 0.0, 100), _core.Node("t2", B_, 0.0, 1),
             _core.Node("b", B_, 1.0, 20), _core.Node("c", B_, 1.0, 50),
             _core.Node("d", B_, 1.0, 5)]
    edges = [(0, 1), (1, 2), (1, 3), (2, 4), (4, 5), (5, 6), (3, 6)]
    graph = _core.Graph(nodes, edges)
    own = _core.minimum_peak_lower_bound(graph)
    assert own == 20 + 100  # b with its input t1
    # At b: b + t1 + t2 = 121 B; at c: 71 B.
    bound, proof = least_peak_bound(graph)
    assert bound == 121 and "'b' with its inputs and the tangents 't1', 't2'" in proof
    count_schedules_at_or_above(graph, bound)
    # The edges that hold each tangent until its last reader, none between tangents: with
    # them remat's own bound is this one, and every schedule holds the tangents.
    held = tangent_edges(1, edges)
    assert held == [(2, 4), (3, 4), (3, 5), (3, 6)]
    with_edges = _core.Graph(nodes, sorted(set(edges) | set(held)))
    assert least_peak_bound(with_edges)[0] == _core.minimum_peak_lower_bound(with_edges) == 121
    assert count_schedules_at_or_above(with_edges, bound) >= 3


def test_the_bound_on_a_hand_graph_counts_the_tangent_beside_a_node_that_does_not_read_it():
    graph = hand_graph()
    assert _core.minimum_peak_lower_bound(graph) == 115
    bound, proof = least_peak_bound(graph)
    assert bound == 190 and "'c' with its inputs and the tangents 't'" in proof
    assert count_schedules_at_or_above(graph, bound) >= 3


def test_a_schedule_that_computes_the_loss_node_again_is_read_as_the_program_that_does_not():
    graph = hand_graph()
    # Frees the loss node after its computation and computes it again in e's stage, holding
    # b for it: remat's model allows it, the emitted program only reads the tangents again.
    R = [[0], [1], [2], [3], [4], [2, 5], [6]]
    S = [[], [0], [0, 1], [0, 1, 2], [0, 1, 3], [1, 3, 4], [3, 5]]
    again = _core.Schedule(graph, R, S)
    assert _core.check_schedule(graph, again) == []
    before = _core.simulate(graph, again)
    assert before.evaluations_per_node[2] == 2
    held = hold_tangents(graph, again)
    assert _core.check_schedule(graph, held) == []
    after = _core.simulate(graph, held)
    assert after.evaluations_per_node[2] == 1
    assert [sorted(stage) for stage in held.R] == [[0], [1], [2], [3], [4], [5], [6]]
    # b was held for the computation again only: no longer.
    assert all(1 not in held.S[t] for t in (3, 4, 5))
    assert after.peak_bytes == before.peak_bytes - 10 == least_peak_bound(graph)[0] == 190
    # A schedule that computes it once is returned as it is.
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
    # The region returns the loss and the logits: two tangents, the logits' of their size.
    tangents = graph.succs(graph.loss)
    assert len(tangents) == 2 and max(graph.nodes[t].bytes for t in tangents) == logits
    assert bound >= 2 * logits and "tangents" in proof
    count_schedules_at_or_above(graph, bound, budget=10**12)
    # Measured: the tangents are real allocations (the bound fails without them).
    assert peak_bytes_of(step) >= bound


def test_a_budget_below_the_bound_is_refused_with_the_tangents_named():
    backend, step = compiled_logits_model("100%")
    step()
    graph = backend.plans[-1].graph
    bound, _ = least_peak_bound(graph)
    between = bound - 8 * 128 * 4096 * 4 // 2
    backend, step = compiled_logits_model(str(between), strict=True)
    # torch.compile wraps a backend's error.
    with pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as failure:
        step()
    error = failure.value.inner_exception
    assert isinstance(error, remat.InfeasibleBudgetError)
    assert "and the tangents" in str(error)
    # Without strict the region runs its least-peak schedule, never below the bound, and the
    # warning says what proves the bound.
    backend, step = compiled_logits_model(str(between))
    with pytest.warns(remat.BudgetWarning, match="and the tangents"):
        step()
    region = backend.plans[-1]
    assert region.plan.status == "least-peak"
    assert region.plan.predicted_peak_bytes >= bound
