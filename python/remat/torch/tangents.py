"""The tangents that backward reads, in remat's graph of a compiled region.

The tangents are the gradients of the region's outputs that autograd hands the backward graph:
a full tensor for each output that requires grad (the logits a language model returns get a
zero tensor of their size). The backward graph remat emits receives them as placeholders
(partition.py) and frees each after its last reader (measured: docs/BENCHMARKS.md at 8528922,
"Each tangent until its own last reader"). joint.py makes them nodes of cost 0 right after the
loss node, their only input, that run once (the tangents with the same last reader, one node).

Let T(v) be the tangents t < v <= r_t (r_t the last reader of t). Each node v after the
tangents computes at its own stage v, once they have arrived, and before each t in T(v) is read
for the last time, so at that computation its output, its workspace, its inputs and T(v) are
live in every program remat emits. ``tangent_edges`` adds an edge from each t to every node in
T's reach (t to each v with t in T(v)): it changes no program, and every schedule of the graph
then holds t until r_t as the program does, so its simulation is the program's and remat's
bounds and searches see the tangents (without the edges a search may free a tangent and compute
it again, from the loss node, which no program does). The peak of every program is at least

    max over v of  bytes(v) + workspace(v) + bytes(inputs(v) + T(v))

remat's own bound (one node with its inputs) on a graph with those edges. Proof:
docs/design.md §8, "Minimum peak with the tangents".

``hold_tangents`` reads a schedule that computes the loss node again (remat's model allows it;
the emitted program only reads the placeholders again) as that program.
"""

from __future__ import annotations

from remat import _core

__all__ = ["hold_tangents", "least_peak_bound", "tangent_edges"]


def tangent_edges(loss: int, edges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The edges that hold the tangents in remat's model (see above): from each tangent (a
    node that the loss node ``loss`` computes) to every node after the tangents up to its last
    reader."""
    tangents = sorted(v for u, v in edges if u == loss)
    last = {t: t for t in tangents}
    for u, v in edges:
        if u in last:
            last[u] = max(last[u], v)
    first = max(tangents, default=loss) + 1
    return [(t, v) for t in tangents for v in range(first, last[t] + 1)]


def hold_tangents(graph: _core.Graph, schedule: _core.Schedule) -> _core.Schedule:
    """``schedule`` with the loss node held from its first computation until the last stage
    that computes one of its readers (the tangents), never computed again, and what was held
    only for those computations (the loss node's inputs) no longer held: the program remat
    emits for ``schedule``, so its simulation is that program's. ``schedule`` itself when it
    computes the loss node once and holds it until then."""
    loss = graph.loss
    if loss is None or loss < 0:
        return schedule
    readers = set(graph.succs(loss))
    R = [list(stage) for stage in schedule.R]
    S = [list(stage) for stage in schedule.S]
    last = max((t for t in range(len(R)) if readers.intersection(R[t])), default=loss)
    if all(loss not in R[t] for t in range(loss + 1, len(R))) and \
            all(loss in S[t] for t in range(loss + 1, last + 1)):
        return schedule
    before = _needed(graph, R)
    R = [[v for v in stage if v != loss] if t > loss else stage for t, stage in enumerate(R)]
    after = _needed(graph, R)
    # Held: the loss node until its readers have run; no longer: what was held only for the
    # loss node's computations again (its inputs), as the emitted program does not hold it.
    S = [sorted((set(held) - (before[t] - after[t])) | ({loss} if loss < t <= last else set()))
         for t, held in enumerate(S)]
    return _core.Schedule(graph, R, S)


def _needed(graph: _core.Graph, R: list) -> list:
    """Per stage t, the values that a computation of stage t or later reads before computing
    them again: what must be held into stage t."""
    needed: set = set()
    per_stage = [set() for _ in R]
    for t in range(len(R) - 1, -1, -1):
        for v in reversed(R[t]):
            needed.discard(v)
            needed.update(graph.preds(v))
        per_stage[t] = set(needed)
    return per_stage


def least_peak_bound(graph: _core.Graph) -> tuple[int, str]:
    """(bytes, what proves them): a lower bound on the activation peak of every program emitted
    for a captured region's ``graph``, the bound above with the tangents live until their last
    reader (remat's own on a graph with ``tangent_edges``), naming the tangents that prove it."""
    best = int(_core.minimum_peak_lower_bound(graph))
    proof = "one operation's output together with its inputs"
    loss = graph.loss
    if loss is None or loss < 0:
        return best, proof
    last = {t: max(graph.succs(t), default=t) for t in graph.succs(loss)}
    nodes = graph.nodes
    named = False
    for v in range(loss + 1, max(last.values(), default=loss) + 1):
        live = set(graph.preds(v)) | {t for t, r in last.items() if t < v <= r}
        held = sorted(live.intersection(last))
        total = nodes[v].bytes + nodes[v].workspace_bytes + sum(nodes[u].bytes for u in live)
        if held and (total > best or (total == best and not named)):
            names = ", ".join(f"'{nodes[t].name}'" for t in held)
            best, named = total, True
            proof = (f"'{nodes[v].name}' with its inputs and the tangents {names}, which "
                     "backward holds until their last reader")
    return best, proof
