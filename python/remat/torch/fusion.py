"""The graph Inductor runs: fusible chains of a joint graph as one remat node.

Inductor compiles each chain of fusible operations (pointwise operations, reductions, views:
everything it lowers itself, as opposed to matrix products and the kernels it calls out to)
into one kernel, which reads the chain's inputs once and writes only the values read after
the chain: the intermediates inside are never materialised. remat plans that graph. torch's
own notion of what fuses groups the nodes (``torch._inductor.fx_passes.fusion_regions``:
the connected components of the contiguous runs of fusible operations, with two or more
operations that are not views). Each group, split into its forward and its backward part,
becomes one remat node per **output** (a member that something outside the group reads):

- the node runs the output's **cone**: the members it derives from, up to the group's other
  outputs, which it reads like any input. Members that two cones share are run by both (cheap
  pointwise work run twice, rather than a value held that Inductor never materialises);
- its **cost** is its kernel's: the bytes the cone reads from outside and the bytes of its
  output, times ``flops_per_byte`` (costs.py);
- its **memory** is its output alone: the members inside never exist as tensors;
- **recomputing** it reruns its cone (partition.py emits the cone's operations in order, and
  Inductor fuses them again).

Inductor writes all of a group's outputs from one kernel, which reads all of the group's inputs
meanwhile, where the cones alone would let an input be freed between two outputs (the last
output reading only the others). So a group whose outputs do not all read the same inputs
gets one more node right after its last output, the kernel's **end**: it reads the group's
inputs and outputs, costs nothing, holds nothing, and nothing reads it, so it runs once, at
the group's first computation, and a recomputation of one output alone is not charged the
others' inputs. The partitioner emits nothing for it.

A group is convex (a run is contiguous in topological order, so every operation on a path
between two members lies in the same run), and a cone reads only outputs it derives from, so
the new graph is a DAG; forward and backward parts are grouped apart, so the loss node still
separates them. Random operations and writes into inputs stay nodes of their own. Two kinds of
members are outputs although nothing outside their group reads them: what the caller names
(what plain torch.compile's partition saves, which Inductor writes out of the kernel) and what
a scatter writes (Inductor materialises it whatever fuses around it).
"""

from __future__ import annotations

import heapq
from typing import Iterable, Optional

import torch
from torch import fx

from remat.torch.joint import JointGraph

__all__ = ["fusion_groups", "fuse"]

# Operations that write into a buffer at computed positions (an upsampling's backward
# accumulates into zeros with index_put): Inductor materialises their outputs. The joint
# graph is functional, so only the out-of-place forms occur.
_aten = torch.ops.aten
_SCATTERS = {_aten.index_put, _aten._unsafe_index_put, _aten.scatter, _aten.scatter_add,
             _aten.scatter_reduce, _aten.index_add}


def fusion_groups(joint: JointGraph) -> list[tuple[list[int], list[fx.Node]]]:
    """The remat nodes of ``joint`` that Inductor fuses: groups of two or more node ids
    (sorted), each within forward or within backward, with the FX nodes of its region that
    derive from them (their views). ValueError when this torch has no fusion regions."""
    try:
        from torch._inductor.fx_passes.fusion_regions import build_fusion_regions
    except ImportError as error:  # a torch without them: the caller plans unfused
        raise ValueError(f"this torch has no fusion regions ({error})") from error

    regions = build_fusion_regions(joint.module)
    seen: set[int] = set()
    groups: list[tuple[list[int], list[fx.Node]]] = []
    for region in regions.values():
        if id(region) in seen:
            continue
        seen.add(id(region))
        own = sorted({joint.base_of[n] for n in region
                      if joint.base_of.get(n) is not None and joint.base_of[n] != joint.loss
                      and joint.order[joint.base_of[n]] is n})
        own = [v for v in own if v not in joint.once and v not in joint.random]
        for part in ([v for v in own if v < joint.loss], [v for v in own if v > joint.loss]):
            if len(part) >= 2:
                members = set(part)
                groups.append((part, [n for n in region if joint.base_of.get(n) in members]))
    return groups


def fuse(joint: JointGraph,
         groups: Optional[list[tuple[list[int], list[fx.Node]]]] = None,
         outputs: Iterable[int] = ()) -> JointGraph:
    """``joint`` with each output of each group of ``groups`` (``fusion_groups`` by default)
    computed by one node: its cone in the group (what it derives from there, up to the group's
    other outputs, which it reads), as one kernel. ``outputs`` (nodes of ``joint``) are outputs
    of their groups too: values that a partition keeps for backward (torch's min-cut partition
    saves a layer norm's statistics, and Inductor then writes them out of the kernel)."""
    if groups is None:
        groups = fusion_groups(joint)
    count = len(joint)
    inputs_of: list[list[int]] = [[] for _ in range(count)]
    for u, w in joint.edges:
        inputs_of[w].append(u)
    read_outside = {joint.base_of[o] for o in (*joint.forward_outputs, *joint.backward_outputs)
                    if isinstance(o, fx.Node) and joint.base_of.get(o) is not None}
    read_outside.update(outputs)
    # A scatter writes into a buffer that Inductor materialises whatever fuses around it.
    read_outside.update(u for u, node in enumerate(joint.order) if node is not None and
                        getattr(node.target, "overloadpacket", None) in _SCATTERS)
    group_of = [-1] * count
    for g, (members, _) in enumerate(groups):
        for u in members:
            group_of[u] = g
    for u, w in joint.edges:
        if group_of[u] != group_of[w] or group_of[u] < 0:
            read_outside.add(u)

    # Each kept node: an original node outside every group, or a group's output; a group's
    # output computes its cone, in the original order, views included.
    cone_of: dict[int, list[int]] = {}
    for members, _ in groups:
        member_set = set(members)
        for u in members:
            if u in read_outside:
                cone_of[u] = _cone(u, member_set, read_outside, inputs_of)
    kept = [u for u in range(count) if group_of[u] < 0 or u in cone_of]
    holder: dict[int, int] = {u: u for u in kept}  # an original node -> the kept one for it
    for u, cone in cone_of.items():
        for w in cone:
            holder.setdefault(w, u)
    edges_of: dict[int, set[int]] = {u: set() for u in kept}
    for u in kept:
        inside = set(cone_of.get(u, ()))
        for w in cone_of.get(u, [u]):
            for a in inputs_of[w]:
                if a in inside:
                    continue
                edges_of[u].add(a if a in edges_of else holder[a])
    order = _topological(kept, edges_of)
    # One kernel writes all of a group's outputs and reads all of its inputs meanwhile: a
    # kernel's end reads both, right after the group's last output.
    # (The end of the kernel whose last output is u is ~u, a negative id.)
    ends: set[int] = set()
    position_in = {u: i for i, u in enumerate(order)}
    for members, _ in groups:
        outs = [u for u in members if u in cone_of]
        reads = set().union(*(edges_of[u] for u in outs)) - set(outs)
        if any(not reads <= edges_of[u] for u in outs):
            last = max(outs, key=position_in.__getitem__)
            ends.add(last)
            edges_of[~last] = reads | set(outs)
    order = [w for u in order for w in ((u, ~u) if u in ends else (u,))]
    new_id = {u: i for i, u in enumerate(order)}
    if any((u < joint.loss) != (new_id[u] < new_id[joint.loss]) for u in kept if u != joint.loss):
        raise ValueError("contracting the fusion groups moved a node across the loss")

    views_of: dict[int, list[fx.Node]] = {}
    for members, region in groups:
        for n in region:
            if joint.order[joint.base_of[n]] is not n:  # a view: emitted with its base
                views_of.setdefault(joint.base_of[n], []).append(n)
    fused: dict[int, tuple[fx.Node, ...]] = {}
    position = {n: i for i, n in enumerate(joint.module.graph.nodes)}
    for u, cone in cone_of.items():
        if len(cone) > 1:
            nodes = [joint.order[w] for w in cone] + \
                [n for w in cone if w != u for n in views_of.get(w, ())]
            fused[new_id[u]] = tuple(sorted(nodes, key=position.__getitem__))
    base_of = {n: (None if b is None else new_id[holder[b]]) for n, b in joint.base_of.items()}
    return JointGraph(module=joint.module,
                      order=[None if u < 0 else joint.order[u] for u in order],
                      loss=new_id[joint.loss], base_of=base_of,
                      edges=sorted((new_id[a], new_id[u]) for u in edges_of for a in edges_of[u]),
                      bytes=[0 if u < 0 else joint.bytes[u] for u in order],
                      once={new_id[v] for v in joint.once},
                      random={new_id[v] for v in joint.random},
                      forward_outputs=joint.forward_outputs,
                      backward_outputs=joint.backward_outputs, fixed_bytes=joint.fixed_bytes,
                      fused=fused, kernel_ends={new_id[~u]: new_id[u] for u in ends},
                      in_place_sums=joint.in_place_sums)


def _cone(output: int, members: set[int], outputs: set[int],
          inputs_of: list[list[int]]) -> list[int]:
    """``output`` and the members of its group it derives from through members that are not
    outputs (sorted)."""
    cone = {output}
    stack = [output]
    while stack:
        w = stack.pop()
        for a in inputs_of[w]:
            if a in members and a not in outputs and a not in cone:
                cone.add(a)
                stack.append(a)
    return sorted(cone)


def _topological(nodes: list[int], inputs: dict[int, set[int]]) -> list[int]:
    """``nodes`` in a topological order of ``inputs``, the smallest id first where the edges
    allow (so forward nodes, the loss, then backward nodes, as in the joint graph)."""
    users: dict[int, list[int]] = {u: [] for u in nodes}
    missing = {u: len(inputs[u]) for u in nodes}
    for u in nodes:
        for a in inputs[u]:
            users[a].append(u)
    ready = [u for u in nodes if missing[u] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        u = heapq.heappop(ready)
        order.append(u)
        for w in users[u]:
            missing[w] -= 1
            if missing[w] == 0:
                heapq.heappush(ready, w)
    if len(order) != len(nodes):
        raise ValueError("the fusion groups are not convex: contracting them makes a cycle")
    return order
