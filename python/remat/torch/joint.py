"""AOTAutograd's joint graph as a remat graph.

A partitioner receives the joint graph of a compiled region: placeholders for the primals
(parameters, buffers, inputs) and the tangents (the gradients of the region's outputs, which
autograd hands to backward), then the forward and backward operations; its output node lists
the forward outputs, then the gradients. remat reads it as a training graph:

- every operation that creates storage is a node, and views fold into their base
  (``storage_nodes.map_storage_nodes``);
- one node stands for what happens outside the region between forward and backward (the loss,
  then autograd): it reads every forward output, holds nothing itself, and is the graph's loss
  node. The tangents are nodes right after it (those with the same last reader, one node),
  of cost 0, that read it and run once: the emitted backward receives the tangents as
  placeholders and frees each after its last reader, and the graph's edges hold each tangent
  until then (tangents.py);
- forward nodes are those that the forward outputs (and in-place writes into inputs, such as
  batch-norm running statistics) need, and a chunked loss's gradient formed in its forward
  (loss_gradient.py); every other node is a backward node.

Random operations (dropout) are recomputed with the random generator's state of their first
run, so they draw the same numbers (partition.py). In-place writes into inputs, and random
operations whose device torch's replay cannot tell (Inductor's seed draw), run once: the C++
strategies cannot be told never to recompute a node, so they are charged the cost of the whole
graph on top of their own when planning (``planning_costs``), and the partitioner rejects a
schedule that still recomputes one. They hold no bytes, so no strategy gains by it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

import torch
from torch import fx
from torch.utils import _pytree as pytree

from remat import _core, interrupt
from remat.errors import CaptureError, UnknownOpError
from remat.torch.loss_gradient import LOSS_PATH
from remat.torch.product_sums import in_place_sums
from remat.torch.storage_nodes import _storages, map_storage_nodes
from remat.torch.structure import _producer, blocks_of, contractions_of
from remat.torch.tangents import tangent_edges
from remat.torch.workspace import node_workspace_bytes

__all__ = ["JointGraph", "read_joint_graph"]


def _tangent_id(index: int) -> int:
    """The id of the ``index``-th tangent storage while the nodes are read (negative: outside
    the graph that ``map_storage_nodes`` reads), before the tangents have nodes."""
    return -1 - index


def _is_tangent(node: fx.Node) -> bool:
    return node.op == "placeholder" and str(node.target).startswith("tangents")


def _is_primal(node: fx.Node) -> bool:
    return node.op == "placeholder" and str(node.target).startswith("primals")


def _symbolic(value: Any) -> bool:
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return True
    if isinstance(value, torch.Tensor):
        return any(isinstance(d, torch.SymInt) for d in value.shape)
    if isinstance(value, (tuple, list)):
        return any(_symbolic(v) for v in value)
    return False


def _data_dependent(value: Any) -> bool:
    """True when a size in ``value`` is a symbol the trace could not bind to an input's size."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    return bool(free_unbacked_symbols(value))


@dataclass
class JointGraph:
    """The joint graph of a compiled region and its remat nodes.

    ``order[i]`` is the FX node that remat node ``i`` computes (None for the loss node, which
    stands for the world outside the region). ``base_of`` maps every FX node that produces a
    value to its remat node: its own, its base's for a view, the loss node's for a tangent, and
    None for what derives from primals alone.
    """

    module: fx.GraphModule
    order: list[Optional[fx.Node]]
    loss: int
    base_of: dict[fx.Node, Optional[int]]
    edges: list[tuple[int, int]]
    bytes: list[int]
    once: set[int]                  # computed once: in-place writes into inputs, the loss
    random: set[int]                # random operations: recomputed with their first state
    forward_outputs: list[Any]
    backward_outputs: list[Any]
    fixed_bytes: int                # primals and the gradients the region returns
    # fusion.py: a node that computes one output of a fused group -> the operations it runs,
    # in order (the output's, last among those that are not views).
    fused: dict[int, tuple[fx.Node, ...]] = field(default_factory=dict)
    # fusion.py: a kernel's end (no operation: it holds nothing, costs nothing and reads its
    # group's inputs and outputs) -> the group's last output.
    kernel_ends: dict[int, int] = field(default_factory=dict)
    # product_sums.py: how many sums the graph counts as added in place (no bytes of their own)
    in_place_sums: int = 0

    def __len__(self) -> int:
        return len(self.order)

    def kinds(self) -> list[Any]:
        return [_core.NodeKind.forward if i < self.loss else
                _core.NodeKind.loss if i == self.loss else _core.NodeKind.backward
                for i in range(len(self.order))]

    def workspace(self) -> list[int]:
        return [0 if n is None or i in self.fused
                else node_workspace_bytes(n) for i, n in enumerate(self.order)]

    def names(self) -> list[str]:
        return [f"end_{self.order[self.kernel_ends[i]].name}" if i in self.kernel_ends else
                "loss" if n is None else
                f"fused_{len(self.fused[i])}_{n.name}" if i in self.fused else n.name
                for i, n in enumerate(self.order)]

    def to_graph(self, costs: Sequence[float], cost_unit: str, name: str = "", *,
                 workspace: bool = True) -> _core.Graph:
        names = self.names()
        spaces = self.workspace() if workspace else [0] * len(self.order)
        blocks = blocks_of(self.order, self.loss)
        contractions = contractions_of(self.order, self.loss)
        nodes = [_core.Node(n, kind, cost, nbytes, workspace_bytes=w, block=b, contraction=c)
                 for n, kind, cost, nbytes, w, b, c in
                 zip(names, self.kinds(), costs, self.bytes, spaces, blocks, contractions)]
        # Each tangent is held until its last reader (tangents.py).
        edges = sorted(set(self.edges) | set(tangent_edges(self.loss, self.edges)))
        return _core.Graph(nodes, edges, cost_unit, name)

    def output_bytes(self) -> int:
        """Bytes of the distinct storages of the region's forward outputs."""
        return _distinct_bytes(o.meta.get("val") for o in self.forward_outputs
                               if isinstance(o, fx.Node))

    def planning_costs(self, costs: Sequence[float]) -> list[float]:
        """``costs`` with every node that must run once charged the whole graph's cost more."""
        penalty = sum(costs) + 1.0
        return [c + penalty if i in self.once else c for i, c in enumerate(costs)]

    def penalty(self, costs: Sequence[float]) -> float:
        """What ``planning_costs`` adds to a schedule that computes each such node once."""
        return (sum(costs) + 1.0) * len(self.once)


def read_joint_graph(module: fx.GraphModule, num_fwd_outputs: int,
                     sums_in_place: bool = False) -> JointGraph:
    """The remat nodes of AOTAutograd's joint graph (see the module docstring).

    Raises CaptureError for what remat cannot plan: symbolic shapes, or an operation that
    reads a tangent but is needed by a forward output.
    """
    graph = module.graph
    placeholders = graph.find_nodes(op="placeholder")
    for node in graph.nodes:
        interrupt.check()
        if _symbolic(node.meta.get("val")) and _data_dependent(node.meta.get("val")):
            raise UnknownOpError(
                f"operation '{node.name}' ({node.target}) has an output whose size depends on "
                "the data at run time: remat cannot count its bytes; let torch.compile break "
                "the graph there (torch._dynamo.config.capture_dynamic_output_shape_ops=False, "
                "the default)")
        if _symbolic(node.meta.get("val")):
            raise CaptureError(
                f"'{node.name}' has a symbolic shape: remat plans one schedule per input shape; "
                "compile with torch.compile(..., dynamic=False) so that each new shape gets a "
                "graph (and a plan) of its own")
    tangents, tangent_of = _tangent_storages(placeholders)
    base_of: dict[fx.Node, Optional[int]] = {p: tangent_of.get(p) for p in placeholders}
    mapped = map_storage_nodes(graph, base_of, input_writes="node")
    output = graph.find_nodes(op="output")[0]
    outputs = pytree.arg_tree_leaves(*output.args)
    forward_outputs, backward_outputs = outputs[:num_fwd_outputs], outputs[num_fwd_outputs:]

    count = len(mapped.nodes)
    inputs_of: list[list[int]] = [[] for _ in range(count)]
    reads_tangent: set[int] = set()
    for u, v in mapped.edges:
        if u < 0:
            reads_tangent.add(v)
        else:
            inputs_of[v].append(u)
    seeds = {base_of[o] for o in forward_outputs
             if isinstance(o, fx.Node) and base_of.get(o) is not None and base_of[o] >= 0}
    users: list[list[int]] = [[] for _ in range(count)]
    for u, v in mapped.edges:
        if u >= 0:
            users[u].append(v)
    after_tangents = _reachable(reads_tangent, users)
    seeds |= mapped.writing_nodes - after_tangents
    forward = _reachable(seeds, inputs_of)
    # A member of a forward operation's result that only backward reads (a layer norm's saved
    # statistics) is taken in forward, as the operation runs, so that the rest of the result
    # can be freed: the member is a forward node of cost 0.
    forward |= {v for v in range(count)
                if v not in reads_tangent and mapped.nodes[v].target is operator.getitem and
                inputs_of[v] and all(u in forward for u in inputs_of[v])}
    # A chunked loss's gradient, formed in its forward (loss_gradient.py), reads forward values
    # only: it runs in the forward pass, each chunk's as its loss is taken, so that no chunk's
    # logits outlive it (as a layer norm's statistics, it would otherwise wait for backward).
    in_loss = _in_chunked_loss(mapped.nodes, users)
    for v in range(count):
        if v not in forward and v not in after_tangents and v in in_loss \
                and all(u in forward for u in inputs_of[v]):
            forward.add(v)
    if forward & reads_tangent:
        v = min(forward & reads_tangent)
        raise CaptureError(f"operation '{mapped.nodes[v].name}' reads a gradient of the "
                           "region's outputs but a forward output needs it")

    # A sum of products added in place (product_sums.py) holds no memory of its own: the
    # chain's first product holds it for every reader of the chain, and each runs once. Only
    # chains of weight gradients (x^T g, whose products read no input of the region): an
    # input's gradient (g W, which reads the weight) is read later, by a concatenation of the
    # chunks, and a plan may rather recompute it than hold it (a row chain's test at 25% met
    # its budget in 4 chunks so, and not with it in place). A chain with members on both sides
    # of the loss is not added in place (the graphs a region runs add in place within one
    # graph).
    sums = in_place_sums(mapped.nodes) if sums_in_place else {}
    left_out = {first for v, first in sums.items()
                if (v in forward) != (first in forward) or
                _reads_an_input(mapped.nodes[v], base_of) or
                _reads_an_input(mapped.nodes[first], base_of)}
    sums = {v: first for v, first in sums.items() if first not in left_out}
    if sums:
        mapped = replace(
            mapped, bytes=[0 if v in sums else b for v, b in enumerate(mapped.bytes)],
            edges=mapped.edges | {(sums[u], v) for u, v in mapped.edges if u in sums}
            | {(first, v) for v, first in sums.items()})
    backward = _backward_order([v for v in range(count) if v not in forward], forward,
                               reads_tangent, inputs_of, users)
    # Tangents freed by the same last reader are one node, after the loss node.
    groups = _tangent_groups(len(tangents), mapped.edges, backward)
    group_of = {_tangent_id(k): _tangent_id(g) for g, ks in enumerate(groups) for k in ks}
    old_order = [v for v in range(count) if v in forward] + [None] + \
        [_tangent_id(g) for g in range(len(groups))] + backward
    loss = len(forward)
    new_id = {old: i for i, old in enumerate(old_order) if old is not None}
    new_id.update({k: new_id[g] for k, g in group_of.items()})
    edges = {(new_id[u], new_id[v]) for u, v in mapped.edges}
    edges |= {(new_id[s], loss) for s in seeds}
    edges |= {(loss, loss + 1 + g) for g in range(len(groups))}
    node_bytes = [0 if old is None else
                  _distinct_bytes([tangents[k].meta.get("val") for k in groups[-1 - old]])
                  if old < 0 else mapped.bytes[old] for old in old_order]
    for node, b in base_of.items():
        if b is not None:
            base_of[node] = new_id[b]
    # A random operation with no tensor input and no device keyword (Inductor's seed draw)
    # cannot be replayed with a saved state: it runs once, like a write.
    replayable = {v for v in mapped.random_nodes if _replayable(mapped.nodes[v])}
    once = {new_id[v] for v in mapped.writing_nodes | (mapped.random_nodes - replayable) |
            set(sums) | set(sums.values())}
    # The tangents are placeholders of the emitted backward: never computed again, nor the loss
    # node, which a computation again would only re-read (tangents.py).
    once |= {loss, *(loss + 1 + g for g in range(len(groups)))}
    random = {new_id[v] for v in replayable}
    fixed = _distinct_bytes([*(p.meta.get("val") for p in placeholders if _is_primal(p)),
                             *(o.meta.get("val") for o in backward_outputs
                               if isinstance(o, fx.Node))])
    return JointGraph(module=module,
                      order=[None if old is None else tangents[groups[-1 - old][0]]
                             if old < 0 else mapped.nodes[old] for old in old_order],
                      loss=loss, base_of=base_of, edges=sorted(edges), bytes=node_bytes,
                      once=once, random=random, forward_outputs=forward_outputs,
                      backward_outputs=backward_outputs, fixed_bytes=fixed,
                      in_place_sums=len(sums))


def _reads_an_input(product: fx.Node, base_of: dict) -> bool:
    """Whether the product ``mm(x, y)`` or ``addmm(acc, x, y)`` reads an input of the region
    (a parameter, through views or not) as ``x`` or ``y``."""
    operands = product.args[:2] if product.target is torch.ops.aten.mm.default else \
        product.args[1:3]
    return any(isinstance(a, fx.Node) and base_of.get(a) is None for a in operands)


def _tangent_storages(placeholders: Sequence[fx.Node]
                      ) -> tuple[list[fx.Node], dict[fx.Node, int]]:
    """The tangents' distinct storages, each as its first placeholder, and for each tangent
    placeholder the id of its storage (``_tangent_id``); a tangent that is not a tensor has
    none."""
    firsts: list[fx.Node] = []
    index: dict[Any, int] = {}
    id_of: dict[fx.Node, int] = {}
    for p in placeholders:
        keys = list(_storages(p.meta.get("val"))) if _is_tangent(p) else []
        if not keys:
            continue
        if keys[0] not in index:
            index[keys[0]] = len(firsts)
            firsts.append(p)
        id_of[p] = _tangent_id(index[keys[0]])
    return firsts, id_of


def _tangent_groups(count: int, edges, backward: list[int]) -> list[list[int]]:
    """The tangent storages (``count``, read by the ``edges`` from their ``_tangent_id``s)
    grouped by their last reader, a position in ``backward``, in the order of those readers;
    those nothing reads, first."""
    position = {v: i for i, v in enumerate(backward)}
    last = [-1] * count
    for u, v in edges:
        if u < 0:
            last[-1 - u] = max(last[-1 - u], position[v])
    by_last: dict[int, list[int]] = {}
    for k in range(count):
        by_last.setdefault(last[k], []).append(k)
    return [by_last[r] for r in sorted(by_last)]


def _backward_order(backward: list[int], forward: set[int], reads_tangent: set[int],
                    inputs_of: list[list[int]], users: list[list[int]]) -> list[int]:
    """The backward nodes in the traced order, except that a node computed from forward
    values alone (the saved statistics of a layer norm, taken from its result) comes right
    before its first reader. In the traced order such nodes come first, right after the
    forward pass, and a staged schedule computes each node in its own stage: the forward
    values they read would all have to be live, or be recomputed, when backward begins."""
    early: set[int] = set()
    for v in backward:
        if v not in reads_tangent and users[v] and \
                all(u in forward or u in early for u in inputs_of[v]):
            early.add(v)
    key: dict[int, tuple[int, int]] = {}
    rest = [v for v in backward if v not in early]
    for i, v in enumerate(rest):
        key[v] = (i, 0)
    for v in reversed([v for v in backward if v in early]):
        first, level = min(key[w] for w in users[v])
        key[v] = (first, level - 1)
    return sorted(backward, key=lambda v: key[v])


def _replayable(node: fx.Node) -> bool:
    """True when torch's replay of a random operation with a saved generator state can tell
    its device: from a tensor argument or a device keyword."""
    if node.kwargs.get("device") is not None:
        return True
    return any(isinstance(a, fx.Node) and isinstance(a.meta.get("val"), torch.Tensor)
               for a in node.args)


def _in_chunked_loss(nodes: list, users: list[list[int]]) -> set[int]:
    """The nodes traced inside a chunked loss (split.py records it as a module), and those
    that a pass made after tracing (no module recorded: a decomposition's ``iota`` and ``eq``
    of a cross-entropy's backward) read only by such nodes."""
    found: set[int] = set()
    for v in reversed(range(len(nodes))):
        stack = _producer(nodes[v]).meta.get("nn_module_stack")
        if LOSS_PATH in (stack or {}) or \
                (stack is None and users[v] and all(w in found for w in users[v])):
            found.add(v)
    return found


def _reachable(start: set[int], neighbours: list[list[int]]) -> set[int]:
    """``start`` and every node reached from it through ``neighbours``."""
    found: set[int] = set()
    stack = list(start)
    while stack:
        v = stack.pop()
        if v not in found:
            found.add(v)
            stack.extend(neighbours[v])
    return found


def _distinct_bytes(values) -> int:
    storages: dict = {}
    for value in values:
        storages.update(_storages(value))
    return sum(storages.values())
