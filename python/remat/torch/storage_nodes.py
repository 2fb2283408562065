"""The storage of an FX graph of aten operations as remat nodes.

The joint graph that AOTAutograd traces for a region (joint.py) is functional: forward and
backward kernels are explicit and in-place updates (batch-norm running statistics) are outputs.
Each operation that creates storage becomes one remat node, and so does each member of a
multi-output operation's result, so that each output is freed after its own last reader. Views
and aliases are folded into the node whose storage they share, so their bytes count once and a
base is never freed while a view of it is in use.
"""

from __future__ import annotations

import contextlib
import operator
from dataclasses import dataclass
from typing import Any, Optional

import torch
from torch import fx
from torch.multiprocessing.reductions import StorageWeakRef

from remat import interrupt
from remat.errors import CaptureError

__all__ = ["StorageNodes", "draws_random_numbers", "map_storage_nodes", "kept_whole",
           "storage_bytes"]


def _tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_in(v)]
    return []


def _storages(value: Any) -> dict:
    """The distinct storages of the tensors in ``value`` (a tensor or a tuple): bytes by key."""
    return {StorageWeakRef(t.untyped_storage()): t.untyped_storage().nbytes()
            for t in _tensors_in(value)}


def storage_bytes(value: Any) -> int:
    """Bytes of the distinct storages of the tensors in ``value``."""
    return sum(_storages(value).values())


def _fx_inputs(node: fx.Node) -> list[fx.Node]:
    found: list[fx.Node] = []
    fx.node.map_arg((node.args, node.kwargs), lambda a: found.append(a) or a)
    return list(dict.fromkeys(found))


def _is_declared_alias(target: Any) -> bool:
    """True when the operator's schema says its outputs alias an input without writing it."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return False
    returns = [r.alias_info for r in schema.returns]
    return bool(returns) and all(a is not None and not a.is_write for a in returns)


def _writes_an_input(target: Any) -> bool:
    schema = getattr(target, "_schema", None)
    return schema is not None and any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


# Operations that tracing would replace by Python decompositions (torch._decomp registers them
# for the Autograd and CompositeImplicitAutograd keys), although eager autograd runs them whole:
# bilinear upsampling would become _unsafe_index operations, slower and, in backward, summed in
# another order than upsample_bilinear2d_backward, so gradients would differ from eager's.
# remat plans them as one node each, like eager runs them.
_KEPT_WHOLE = ("upsample_bilinear2d", "upsample_bicubic2d", "upsample_linear1d",
               "upsample_trilinear3d", "upsample_nearest1d", "upsample_nearest2d",
               "upsample_nearest3d", "_upsample_bilinear2d_aa")


@contextlib.contextmanager
def kept_whole():
    """Within it, tracing records the operations of ``_KEPT_WHOLE`` as eager autograd runs them,
    without torch's Python decompositions."""
    keys = (torch._C.DispatchKey.Autograd, torch._C.DispatchKey.CompositeImplicitAutograd)
    removed = []
    for name in _KEPT_WHOLE:
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            for key in keys:
                if key in op.py_kernels:
                    removed.append((op, key, op.py_kernels.pop(key)))
            op._dispatch_cache.clear()
    try:
        yield
    finally:
        for op, key, kernel in removed:
            op.py_kernels[key] = kernel
            op._dispatch_cache.clear()


def _split_members(graph: fx.Graph) -> set[fx.Node]:
    """The getitem nodes that become remat nodes: members read by another operation, of an
    operation with at least two such members."""
    split: set[fx.Node] = set()
    for node in graph.nodes:
        read = [g for g in node.users if g.target is operator.getitem
                and any(u.op != "output" for u in g.users)]
        if len(read) >= 2:
            split.update(read)
    return split


@dataclass
class StorageNodes:
    """The FX nodes of a graph that create storage, as remat nodes (see the module docstring)."""

    nodes: list[fx.Node]
    bytes: list[int]
    edges: set[tuple[int, int]]
    random_nodes: set[int]
    writing_nodes: set[int]   # nodes that write into a graph input in place (input_writes="node")


def map_storage_nodes(graph: fx.Graph, base_of: dict[fx.Node, Optional[int]], *,
                      input_writes: str = "error") -> StorageNodes:
    """Maps each operation of ``graph`` that creates storage to a remat node, in graph order.

    ``base_of`` starts with the placeholders (None, or a negative id that stands for a node
    outside the graph, kept in the edges) and is filled for every node: its remat node, the
    node whose storage a view shares, or what the placeholder maps to. An operation that writes
    into its input in place raises CaptureError, or with ``input_writes="node"`` becomes a node
    of zero bytes (its output is its input's storage) listed in ``writing_nodes``.
    """
    split_members = _split_members(graph)
    nodes: list[fx.Node] = []
    edges: set[tuple[int, int]] = set()
    node_bytes: list[int] = []
    random_nodes: set[int] = set()
    writing_nodes: set[int] = set()

    for node in graph.nodes:
        interrupt.check()
        if node.op == "get_attr":
            base_of[node] = None  # a constant the trace lifted into the module
            continue
        if node.op != "call_function":
            continue
        inputs_fx = _fx_inputs(node)
        val = node.meta.get("val")
        if _writes_an_input(node.target):
            if input_writes != "node":
                raise CaptureError(f"operation '{node.name}' ({node.target}) writes into its "
                                   "input in place after functionalization; remat cannot "
                                   "reorder it")
            v = len(nodes)
            nodes.append(node)
            base_of[node] = v
            node_bytes.append(0)
            writing_nodes.add(v)
            for a in inputs_fx:
                if base_of[a] is not None:
                    edges.add((base_of[a], v))
            continue
        if node.target is operator.getitem:
            # Members of a multi-output operation that other operations read are nodes of
            # their own (cost 0, their own bytes) when there are two or more of them, so that
            # each is freed after its own last reader; the operation's node then lives only
            # until its members are taken. Members that only leave the step (gradients, new
            # running statistics) are applied at the operation's first computation. A member of
            # a list of views (split) is a view.
            owner = base_of[node.args[0]]
            is_alias = owner is None or owner < 0 or nodes[owner] is not node.args[0] \
                or node not in split_members
        else:
            is_alias = _is_declared_alias(node.target)
        if node.target is not operator.getitem and not is_alias and inputs_fx \
                and _tensors_in(val):
            # Storage identity of the fake values: an operation whose every output shares a
            # storage with its inputs is a view even when its schema does not say so.
            input_storages = set().union(*(_storages(a.meta.get("val")) for a in inputs_fx))
            outs = _storages(val).keys()
            if outs and outs <= input_storages:
                is_alias = True
            elif outs & input_storages:
                raise CaptureError(f"operation '{node.name}' ({node.target}) returns both new "
                                   "tensors and views of its inputs; remat cannot free them "
                                   "separately")
        if is_alias:
            bases = {base_of[a] for a in inputs_fx}
            if len(bases) > 1:
                raise CaptureError(f"view '{node.name}' ({node.target}) reads more than one "
                                   "computed value")
            base_of[node] = bases.pop() if bases else None
            continue
        v = len(nodes)
        nodes.append(node)
        base_of[node] = v
        node_bytes.append(storage_bytes(val))
        for a in inputs_fx:
            u = base_of[a]
            if u is not None:
                edges.add((u, v))
        if draws_random_numbers(node):
            random_nodes.add(v)
    return StorageNodes(nodes, node_bytes, edges, random_nodes, writing_nodes)


def draws_random_numbers(node: fx.Node) -> bool:
    """Whether ``node`` draws from a random generator: an operation tagged as seeded, unless
    its ``dropout_p`` argument is 0 (an attention kernel's, which draws nothing then)."""
    if node.op != "call_function" or \
            torch.Tag.nondeterministic_seeded not in getattr(node.target, "tags", ()):
        return False
    schema = getattr(node.target, "_schema", None)
    for i, argument in enumerate(schema.arguments if schema is not None else ()):
        if argument.name == "dropout_p":
            value = node.args[i] if i < len(node.args) else \
                node.kwargs.get("dropout_p", argument.default_value)
            return not (isinstance(value, (int, float)) and value == 0)
    return True
