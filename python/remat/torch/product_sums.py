"""Sums of matrix products as ``addmm``, in a joint graph before it is planned.

A weight read by several chunks of a split region (split.py) gets its gradient as a sum of
products, one per chunk: ``add(acc, mm(g_c^T, h_c))``. As two operations, the product is
allocated beside the sum so far and the new sum, three weight-sized tensors at once (the
floor of a head whose vocabulary makes the weight large). ``addmm(acc, g_c^T, h_c)`` computes
the same sum, up to the order of float additions, with no product of its own: two
weight-sized tensors and the chunk. remat plans that graph (functional, as AOTAutograd's).

The graphs a region then runs add each chunk's product into the sum so far, in its memory
(``accumulate_in_place``): an out-of-place ``addmm`` first copies the sum into a new tensor,
which on Llama's 32000-entry head (8 chunks, one CPU thread) took a quarter of its step's time.
remat's graph counts a weight gradient's chain so (``in_place_sums``, joint.py): a sum added
in place holds no bytes of its own, the chain's first product holds the memory until the last
reader of any sum of the chain, and each runs once (an input's gradient, and a chain with
members on both sides of the loss, stay out of place). The in-place sum is an operator of
remat's own (``remat::accumulate_product``, declared as writing its first argument), not
``aten.addmm_``: Inductor has no lowering of ``addmm_`` and, where the ``CI`` environment
variable is set, refuses to run one that has a decomposition as a fallback kernel.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch
from torch import fx

__all__ = ["accumulate_in_place", "fold_product_sums", "in_place_sums"]

_aten = torch.ops.aten


def _product(node: fx.Node) -> Optional[tuple[fx.Node, bool, list[fx.Node]]]:
    """(the ``mm`` that ``node`` is, through transposes each read only by the next, whether
    an odd number of them transpose it, the transposes) or None."""
    transposed, chain = False, []
    while node.op == "call_function" and node.target is _aten.t.default and \
            len(node.users) == 1:
        chain.append(node)
        transposed = not transposed
        node = node.args[0]
    if node.op == "call_function" and node.target is _aten.mm.default and \
            len(node.users) == 1:
        return node, transposed, chain
    return None


def _value(node) -> Optional[torch.Tensor]:
    value = node.meta.get("val") if isinstance(node, fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None


def fold_product_sums(module: fx.GraphModule) -> int:
    """Rewrites, in place, each ``add(a, b)`` (no alpha) of two 2-D tensors of one dtype where
    ``b`` (or ``a``) is an ``mm``, through transposes, read by nothing else: ``addmm(a, x, y)``
    with the product's operands (transposed and swapped when the transposes are odd). Returns
    how many were folded."""
    graph = module.graph
    folded = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not _aten.add.Tensor or \
                len(node.args) != 2 or node.kwargs:
            continue
        out = _value(node)
        if out is None or out.dim() != 2:
            continue
        for mine, other in ((node.args[1], node.args[0]), (node.args[0], node.args[1])):
            found = _product(mine) if isinstance(mine, fx.Node) else None
            other_value = _value(other)
            if found is None or other_value is None or \
                    other_value.shape != out.shape or other_value.dtype != out.dtype or \
                    _value(found[0]) is None or _value(found[0]).dtype != out.dtype:
                continue
            mm, transposed, chain = found
            x, y = mm.args
            with graph.inserting_before(node):
                if transposed:  # (x y)^T = y^T x^T
                    x, y = (graph.call_function(_aten.t.default, (y,)),
                            graph.call_function(_aten.t.default, (x,)))
                    for made, source in ((x, mm.args[1]), (y, mm.args[0])):
                        made.meta.update(mm.meta)
                        made.meta["val"] = _value(source).t()
                summed = graph.call_function(_aten.addmm.default, (other, x, y))
            summed.meta.update(node.meta)
            node.replace_all_uses_with(summed)
            graph.erase_node(node)
            for dead in chain:
                graph.erase_node(dead)
            graph.erase_node(mm)
            folded += 1
            break
    if folded:
        graph.lint()
        module.recompile()
    return folded


@torch.library.custom_op("remat::accumulate_product", mutates_args=("acc",))
def accumulate_product(acc: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> None:
    """``acc += x @ y`` in ``acc``'s memory."""
    acc.addmm_(x, y)


@accumulate_product.register_fake
def _(acc: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> None:
    return None


_ACCUMULATE = torch.ops.remat.accumulate_product.default


def _added_into(node: fx.Node) -> Optional[fx.Node]:
    """``acc``, where ``node`` is an ``addmm(acc, x, y)`` (no alpha or beta) that can add into
    ``acc``'s memory: ``acc`` a product of the graph (``mm`` or ``addmm``) of the output's
    layout, read by nothing else but the sums already added into it. Else None."""
    if node.op != "call_function" or node.target is not _aten.addmm.default or \
            len(node.args) != 3 or node.kwargs:
        return None
    acc = node.args[0]
    out, value = _value(node), _value(acc)
    if not isinstance(acc, fx.Node) or acc.op != "call_function" or \
            acc.target not in (_aten.mm.default, _aten.addmm.default) or \
            [u for u in acc.users if u.target is not _ACCUMULATE] != [node] or \
            out is None or value is None or value.shape != out.shape or \
            value.dtype != out.dtype or value.stride() != out.stride():
        return None
    return acc


def accumulate_in_place(module: fx.GraphModule) -> int:
    """Rewrites, in place, each ``addmm(acc, x, y)`` that can add into ``acc``'s memory
    (``_added_into``): ``accumulate_product(acc, x, y)``, which adds the product into
    ``acc``'s memory instead of copying it into a new tensor first, and the sum's readers read
    ``acc`` after it. Returns how many were rewritten."""
    graph = module.graph
    rewritten = 0
    for node in list(graph.nodes):
        acc = _added_into(node)
        if acc is None:
            continue
        with graph.inserting_before(node):
            graph.call_function(_ACCUMULATE, node.args)
        node.replace_all_uses_with(acc)
        graph.erase_node(node)
        rewritten += 1
    if rewritten:
        graph.lint()
        module.recompile()
    return rewritten


def in_place_sums(nodes: Sequence[fx.Node]) -> dict[int, int]:
    """Of a joint graph's storage nodes (``nodes``, in order), each ``addmm(acc, x, y)`` that
    ``accumulate_in_place`` would run in place (``_added_into``), by its index, mapped to the
    index of the product whose memory the chain of sums adds into (its first)."""
    index = {node: i for i, node in enumerate(nodes)}
    first: dict[int, int] = {}
    for v, node in enumerate(nodes):
        acc = _added_into(node)
        if acc is None or acc not in index:
            continue
        u = index[acc]
        first[v] = first.get(u, u)
    return first
