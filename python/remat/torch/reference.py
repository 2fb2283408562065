"""What the user runs today, as a remat schedule: the reference that budget percentages are of.

Plain ``torch.compile`` (Inductor) partitions a region's joint graph with AOTAutograd's min-cut
partitioner: the forward saves a cut of values and the backward recomputes the cheap operations
between them. remat reads that partition as a schedule of its own graph: each remat node is
held from its computation to its last reader when the partition saves it (or it is a tangent
or a backward value), and a saved value further, to the last recomputation that reads it; a
forward value the partition does not save is held only through the forward, and every other
read is a recomputation (the cheapest one, docs/design.md §3's R from S). torch may compute a
backward operation of the joint graph in forward and save it, when it reads forward values
alone (a layer norm's normalised input): remat's graph computes it in backward, so the forward
values it derives from count as saved. The simulator then gives its peak and cost like any schedule's; at a budget that holds
that peak (100%) the region runs torch's partition itself. Eager autograd (``wrap``,
``compiler="aot_eager"``) saves what the backward reads: its reference is remat's
no-rematerialization schedule (region.py).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from torch import fx

from remat import _core, interrupt
from remat.torch.joint import JointGraph
from remat.torch.storage_nodes import draws_random_numbers

__all__ = ["MinCutPartition", "TorchPartitions", "min_cut_partition", "saved_ids",
           "held_until_of", "recomputed_runs", "min_cut_schedule", "draws_randomness"]


@dataclass
class MinCutPartition:
    """torch's min-cut partition of a joint graph: the remat nodes whose values the forward
    saves, the forward and backward graphs that plain torch.compile would run, and the joint
    graph's operations whose values the backward receives (``saved`` is read from them)."""

    saved: set[int]
    forward: fx.GraphModule
    backward: fx.GraphModule
    saved_nodes: list[fx.Node]


def min_cut_partition(joint: JointGraph, joint_inputs: Any, num_fwd_outputs: int,
                      static_lifetime_input_indices: Optional[Sequence[int]] = None,
                      memory_budget: float = 1.0) -> MinCutPartition:
    """torch's min-cut partition (Inductor's default) of a copy of the joint graph; with
    ``memory_budget`` below 1, the partition of torch's own budget knob
    (``torch._functorch.config.activation_memory_budget``) at that fraction."""
    from torch._functorch import config as functorch_config
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    graph = fx.Graph()
    copies: dict[fx.Node, fx.Node] = {}
    result = graph.graph_copy(joint.module.graph, copies)
    graph.output(result)
    module = fx.GraphModule(joint.module, graph)
    with functorch_config.patch(activation_memory_budget=memory_budget):
        forward, backward = min_cut_rematerialization_partition(
            module, joint_inputs, compiler="inductor", num_fwd_outputs=num_fwd_outputs,
            static_lifetime_input_indices=list(static_lifetime_input_indices or []))
    originals = {copy.name: node for node, copy in copies.items()}
    nodes = [originals[p.name] for p in backward.graph.find_nodes(op="placeholder")
             if p.name in originals]
    return MinCutPartition(saved_ids(joint, nodes), forward, backward, nodes)


def draws_randomness(module: fx.GraphModule) -> bool:
    """True when ``module`` runs an operation that draws from a random generator (a dropout, a
    random tensor, Inductor's seed draw). In a backward graph of torch's, that is a forward
    draw made again, with other random numbers: torch's knob recomputes random operations
    (a min-cut partition at a budget below 1 may trade its ban on recomputing them away)."""
    return any(draws_random_numbers(node) for node in module.graph.nodes)


def saved_ids(joint: JointGraph, nodes: Sequence[fx.Node]) -> set[int]:
    """The remat nodes of ``joint`` that a backward receiving the values of the joint graph's
    operations ``nodes`` keeps from forward."""
    saved: set[int] = set()
    for node in nodes:
        base = joint.base_of.get(node)
        if base is not None and base < joint.loss:
            saved.add(base)
        elif base is not None and base > joint.loss:
            # A backward operation of the joint graph that reads forward values alone (a layer
            # norm's normalised input, for its backward): torch computes it in forward and
            # saves it. remat's graph computes it in backward, so the forward values it reads
            # are held instead (the same bytes, for the statistics and the input).
            saved |= _forward_sources(node, joint)
    return saved


def _forward_sources(node: fx.Node, joint: JointGraph) -> set[int]:
    """The forward remat nodes that the joint graph's backward operation ``node`` derives from
    through backward operations. Walked over the operations, not over remat's nodes: under
    fusion the remat node that computes ``node`` runs a whole chain of backward operations,
    and its inputs would reach every forward value the chain reads."""
    found: set[int] = set()
    seen: set[fx.Node] = set()
    stack = [node]
    while stack:
        for a in stack.pop().all_input_nodes:
            base = joint.base_of.get(a)
            if base is None or a in seen:
                continue
            seen.add(a)
            if base < joint.loss:
                found.add(base)
            elif base > joint.loss:
                stack.append(a)
    return found


@dataclass
class TorchPartitions:
    """torch's own partitions of one joint graph, made when first asked for: the min-cut
    partition that plain torch.compile runs, and the knob's at a fraction."""

    joint: JointGraph
    joint_inputs: Any
    num_fwd_outputs: int
    static_lifetime_input_indices: Optional[Sequence[int]] = None
    made: dict = field(default_factory=dict)  # memory budget -> MinCutPartition
    spent_s: float = 0.0  # seconds spent making them

    def at(self, memory_budget: float = 1.0) -> MinCutPartition:
        """The partition at torch's ``activation_memory_budget`` (1: plain torch.compile)."""
        key = min(1.0, max(0.0, float(memory_budget)))
        if key not in self.made:
            started = time.monotonic()
            interrupt.check()  # torch's min-cut solve is long: not after Ctrl-C
            self.made[key] = min_cut_partition(self.joint, self.joint_inputs,
                                               self.num_fwd_outputs,
                                               self.static_lifetime_input_indices, key)
            self.spent_s += time.monotonic() - started
            interrupt.check()
        return self.made[key]

    def rebased(self, joint: JointGraph) -> "TorchPartitions":
        """The same partitions read on ``joint``, another remat graph of the same joint graph
        (its fused graph, fusion.py)."""
        made = {key: dataclasses.replace(p, saved=saved_ids(joint, p.saved_nodes))
                for key, p in self.made.items()}
        return dataclasses.replace(self, joint=joint, made=made)


def _backward_needs(joint: JointGraph, saved: set[int]):
    """What reading a partition that saves ``saved`` rests on: the saved set with what must run
    once (an in-place write, Inductor's seed draw: never recomputed, torch keeps it as a saved
    value), and per node the first and the last stage that reads it or recomputes from it (a
    forward value backward reads and the partition does not save is recomputed from its
    inputs, which backward keeps until then); the first counts backward stages only,
    ``len(joint)`` where none."""
    n = len(joint)
    saved = set(saved) | {v for v in joint.once if v < joint.loss}
    last_needed = list(range(n))
    first_needed = [n] * n
    inputs_of: list[list[int]] = [[] for _ in range(n)]
    for u, v in joint.edges:
        last_needed[u] = max(last_needed[u], v)
        inputs_of[v].append(u)
        if v > joint.loss:
            first_needed[u] = min(first_needed[u], v)
    for w in reversed(range(joint.loss)):
        if w not in saved and last_needed[w] > joint.loss:
            # w is recomputed once, at its first backward need: its inputs are needed there,
            # not until w's last reader (which held them through the backward before).
            for u in inputs_of[w]:
                last_needed[u] = max(last_needed[u], first_needed[w])
                first_needed[u] = min(first_needed[u], first_needed[w])
    return saved, first_needed, last_needed


def held_until_of(joint: JointGraph, saved: set[int]) -> list[int]:
    """For each remat node, the last stage that holds it from its first computation when the
    backward keeps only ``saved`` of the forward values: the tangents and backward values
    until their last reader, other forward values until their last forward reader, and saved
    values until their last reader or the last recomputation that reads them. What must run
    once counts as saved."""
    saved, _, last_needed = _backward_needs(joint, saved)
    last_forward_reader = list(range(len(joint)))
    for u, v in joint.edges:
        if v <= joint.loss:
            last_forward_reader[u] = max(last_forward_reader[u], v)
    return [last_needed[i] if i >= joint.loss or i in saved else last_forward_reader[i]
            for i in range(len(joint))]


def recomputed_runs(joint: JointGraph, saved: set[int]) -> list[tuple[int, int, int]]:
    """What backward keeps of what it recomputes, as (node, first, last) runs of held stages:
    torch's backward graph computes a forward value it does not save once, before the first
    backward node that reads it (or recomputes from it), and keeps it until the last; read as
    a remat schedule, the value is recomputed in that stage and held from the next through
    the last."""
    saved, first_needed, last_needed = _backward_needs(joint, saved)
    return [(w, first_needed[w] + 1, last_needed[w]) for w in range(joint.loss)
            if w not in saved and joint.loss < first_needed[w] < last_needed[w]]


def min_cut_schedule(graph: _core.Graph, joint: JointGraph, saved: set[int]) -> _core.Schedule:
    """The schedule of the partition that saves ``saved`` (torch's min-cut partition): saved
    values held until backward is done with them, recomputed ones held from their
    recomputation until their last reader (``recomputed_runs``)."""
    return _core.schedule_holding(graph, held_until_of(joint, saved),
                                  recomputed_runs(joint, saved))
