"""Costs of a joint graph's operations in FLOPs.

PyTorch's own FLOP formulas (``torch.utils.flop_counter.flop_registry``: matrix
products, convolutions and their backward kernels, attention), and the same attention formulas
for the CPU kernels of scaled dot-product attention, which the registry leaves out. Every other operation
(aten or not, data-dependent ones included, such as ``index`` with a boolean mask) is charged
the bytes it moves (inputs read plus outputs written) times ``flops_per_byte``, a
roofline-style term so that no operation where time is spent costs zero: the sizes come from
the traced graph's metadata (``meta["val"]``), static once the trace has run. Only an operation
whose output size the trace left unknown (no metadata, or a size that depends on data at run
time) has no cost rule: it raises UnknownOpError unless ``unknown_ops="zero-cost"``.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
from torch import fx
from torch.utils.flop_counter import flop_registry, sdpa_backward_flop_count, sdpa_flop_count

from remat import interrupt
from remat.errors import UnknownOpError, UsageError
from remat.options import check_choice, check_number
from remat.torch.storage_nodes import _tensors_in, storage_bytes

__all__ = ["node_flops", "joint_flops"]

UNKNOWN_OPS = ("error", "zero-cost")


def _value(node: Any) -> Any:
    return node.meta.get("val") if isinstance(node, fx.Node) else node


def _is_static(value: Any) -> bool:
    """True when every tensor in ``value`` has a size known without running the graph."""
    if isinstance(value, torch.Tensor):
        return all(isinstance(d, int) for d in value.shape)
    if isinstance(value, (tuple, list)):
        return all(_is_static(v) for v in value)
    return not isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool))


def _has_no_rule(node: fx.Node) -> bool:
    """True when the trace left the size of ``node``'s output unknown."""
    return "val" not in node.meta or not _is_static(node.meta["val"])


def _bytes_read(node: fx.Node) -> int:
    """Bytes of every tensor argument, views by their own size."""
    values = fx.node.map_aggregate((node.args, tuple(node.kwargs.values())), _value)
    return sum(t.numel() * t.element_size() for t in _tensors_in(values))


def _shape(value: Any) -> tuple:
    return tuple(value.shape)


def _cpu_attention_flops(query, key, value, *args, **kwargs) -> int:
    """The CPU flash attention kernel does the products of any attention: QK^T and PV."""
    return sdpa_flop_count(_shape(query), _shape(key), _shape(value))


def _cpu_attention_backward_flops(grad_out, query, key, value, *args, **kwargs) -> int:
    return sdpa_backward_flop_count(_shape(grad_out), _shape(query), _shape(key), _shape(value))


# FLOP formulas for aten operations that torch's flop_registry leaves out: scaled dot-product
# attention's CPU kernels (without them attention is charged its bytes moved, about a
# thousandth of its work, and plans recompute it first).
_EXTRA_FORMULAS = {
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_attention_flops,
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward:
        _cpu_attention_backward_flops,
}


def _formula(target: Any):
    packet = target.overloadpacket
    formula = flop_registry.get(packet)
    if formula is not None:
        return lambda *args, out_val=None, **kwargs: formula(*args, **kwargs, out_val=out_val)
    extra = _EXTRA_FORMULAS.get(packet)
    if extra is not None:
        return lambda *args, out_val=None, **kwargs: extra(*args, **kwargs)
    return None


def node_flops(node: fx.Node, *, flops_per_byte: float = 1.0,
               unknown_ops: str = "error") -> float:
    """One operation's cost in FLOPs (see the module docstring)."""
    target = node.target
    if target is operator.getitem:
        return 0.0  # takes one output of a multi-output operation: no work
    if _has_no_rule(node):
        if unknown_ops == "error":
            raise UnknownOpError(
                f"operation '{node.name}' ({target}) has no cost rule: the trace left the "
                "size of its output unknown; pass unknown_ops=\"zero-cost\" to charge it "
                "nothing")
        return 0.0
    formula = _formula(target) if getattr(target, "overloadpacket", None) else None
    if formula is not None:
        args = fx.node.map_aggregate(node.args, _value)
        kwargs = {k: fx.node.map_aggregate(v, _value) for k, v in node.kwargs.items()}
        return float(formula(*args, **kwargs, out_val=node.meta.get("val")))
    moved = _bytes_read(node) + storage_bytes(node.meta.get("val"))
    return float(moved) * flops_per_byte


def joint_flops(joint: Any, *, flops_per_byte: float = 1.0,
                unknown_ops: str = "error") -> list[float]:
    """One cost per node of a compiled region's joint graph (joint.py), in FLOPs: a fused
    group's (fusion.py) is its kernel's, the bytes it reads from outside the group and the
    bytes it writes for readers outside, times ``flops_per_byte``; every other node costs
    ``node_flops``."""
    costs = []
    for i, node in enumerate(joint.order):
        interrupt.check()
        if node is None:
            costs.append(0.0)
        elif i in joint.fused:
            costs.append(_group_flops(joint, i, flops_per_byte, unknown_ops))
        else:
            costs.append(node_flops(node, flops_per_byte=flops_per_byte,
                                    unknown_ops=unknown_ops))
    return costs


def _group_flops(joint: Any, group: int, flops_per_byte: float, unknown_ops: str) -> float:
    inside = set(joint.fused[group])
    read: dict[fx.Node, int] = {}
    for node in joint.fused[group]:
        if _has_no_rule(node):
            if unknown_ops == "error":
                node_flops(node, unknown_ops=unknown_ops)  # raises, naming the operation
            return 0.0
        for arg in node.all_input_nodes:
            if arg not in inside:
                read[arg] = sum(t.numel() * t.element_size()
                                for t in _tensors_in(arg.meta.get("val")))
    return float(sum(read.values()) + joint.bytes[group]) * flops_per_byte


def check_cost_options(flops_per_byte: Any, unknown_ops: str, *,
                       machine_ok: bool = False) -> None:
    check_choice("unknown_ops", unknown_ops, UNKNOWN_OPS)
    if machine_ok and flops_per_byte == "machine":
        return
    try:
        check_number("flops_per_byte", flops_per_byte, low=0)
    except UsageError:
        if not machine_ok:
            raise
        raise UsageError('flops_per_byte must be a finite number >= 0 or "machine", got '
                         f"{flops_per_byte!r}") from None
