"""The tangents that backward reads: schedules read as the programs that hold them, and a bound
on the least peak of a compiled region with them live.

A region's loss node (joint.py) stands for the tangents, the gradients of the region's outputs
that autograd hands the backward graph: a full tensor for each output that requires grad (the
logits a language model returns get a zero tensor of their size). The backward graph remat emits
reads them as placeholders (partition.py), released after their last reader. So in every
program remat emits the tangents are live from the start of backward until the last node that
reads the loss node runs, whatever the schedule (a schedule that frees the loss node and
computes it again only reads the placeholders again). ``hold_tangents`` reads such a schedule as
that program: the loss node held until its readers have run, never computed again.

Let L be the loss node and r its last reader. Each node v with L < v <= r is computed at its
own stage v, in backward (after the loss node's first computation) and no later than stage r,
where the tangents are read again: at that computation v's output, its workspace, its inputs
and the tangents are live at once. The peak of the program is therefore at least

    max over L < v <= r of  bytes(v) + workspace(v) + sum of bytes(u) over u in inputs(v) + {L}

and at least remat's own bound (one node with its inputs, valid for every schedule). Proof and
figures: docs/python.md, "The tangents stay live".
"""

from __future__ import annotations

from remat import _core

__all__ = ["hold_tangents", "least_peak_bound", "tangent_edges"]


def tangent_edges(loss: int, edges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The edges that keep the tangents live in remat's model: from the loss node to every
    node after it up to its last reader ``r``, so that every schedule holds the loss node while
    each of them computes (as every emitted program does), and every search and bound sees the
    tangents. Empty where nothing reads the loss node."""
    last = max((v for u, v in edges if u == loss), default=loss)
    return [(loss, v) for v in range(loss + 1, last + 1)]


def _tangent_bound(graph: _core.Graph) -> int:
    """The first term above (0 for a graph without a loss node or without its readers)."""
    loss = graph.loss
    if loss is None or loss < 0:
        return 0
    readers = graph.succs(loss)
    if not readers:
        return 0
    nodes = graph.nodes
    best = 0
    for v in range(loss + 1, max(readers) + 1):
        live = set(graph.preds(v)) | {loss}
        total = nodes[v].bytes + nodes[v].workspace_bytes + sum(nodes[u].bytes for u in live)
        best = max(best, total)
    return best


def hold_tangents(graph: _core.Graph, schedule: _core.Schedule) -> _core.Schedule:
    """``schedule`` with the loss node held from its first computation until the last stage
    that computes one of its readers, never computed again, and what was held only for those
    computations (the loss node's inputs) no longer held: the program remat emits for
    ``schedule`` (its computations of the loss node again only re-read the placeholders), so
    its simulation is that program's. ``schedule`` itself when it computes the loss node once
    and holds it until then."""
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
    for a captured region's ``graph``, the larger of remat's bound on its least peak and the
    bound with the tangents live until their last reader."""
    own = int(_core.minimum_peak_lower_bound(graph))
    tangents = _tangent_bound(graph)
    # A captured graph's tangent edges (``tangent_edges``) let remat's own bound see the
    # tangents; where it is the larger, the tangents prove it.
    if tangents and tangents >= own:
        return tangents, "one operation's output with its inputs and the tangents, which " \
                         "backward reads until its node " \
                         f"'{graph.nodes[max(graph.succs(graph.loss))].name}'"
    return own, "one operation's output together with its inputs"
