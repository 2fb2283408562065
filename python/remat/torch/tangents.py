"""The tangents that backward reads, in remat's graph of a compiled region.

The tangents are the gradients of the region's outputs that autograd hands the backward graph:
a full tensor for each output that requires grad (the logits a language model returns get a
zero tensor of their size). The backward graph remat emits receives them as placeholders
(partition.py) and frees each after its last reader (measured: docs/BENCHMARKS.md). joint.py
makes each tangent (each distinct storage) a node of cost 0 right after the loss node, its only
input, that runs once: a schedule that computes a tangent again is rejected, so every schedule
that runs holds each tangent t from its arrival until its last reader r_t, as the program does.

Let T(v) be the tangents t < v <= r_t. Each node v after the tangents computes at its own
stage v, once they have arrived, and before each t in T(v) is read for the last time, so at
that computation its output, its workspace, its inputs and T(v) are live in every program
remat emits. The peak of every such program is therefore at least

    max over v of  bytes(v) + workspace(v) + bytes(inputs(v) + T(v))

which is remat's own bound (one node with its inputs) when no tangent is live beside a node
that does not read it. Proof and figures: docs/python.md, "The tangents stay live".

``hold_tangents`` reads a schedule that computes the loss node again (remat's model allows it;
the emitted program only reads the placeholders again) as that program.
"""

from __future__ import annotations

from remat import _core

__all__ = ["hold_tangents", "least_peak_bound"]


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
    reader (remat's own where no tangent adds to it)."""
    best = int(_core.minimum_peak_lower_bound(graph))
    proof = "one operation's output together with its inputs"
    loss = graph.loss
    if loss is None or loss < 0:
        return best, proof
    last = {t: max(graph.succs(t), default=t) for t in graph.succs(loss)}
    nodes = graph.nodes
    for v in range(loss + 1, max(last.values(), default=loss) + 1):
        inputs = set(graph.preds(v))
        live = sorted(t for t, r in last.items() if t < v <= r and t not in inputs)
        total = nodes[v].bytes + nodes[v].workspace_bytes + \
            sum(nodes[u].bytes for u in inputs) + sum(nodes[t].bytes for t in live)
        if total > best:
            names = ", ".join(f"'{nodes[t].name}'" for t in live)
            best, proof = total, (f"'{nodes[v].name}' with its inputs and the tangents {names}, "
                                  "which backward holds until their last reader")
    return best, proof
