"""Module structure of a captured graph: the repeated blocks and the contractions.

remat's baselines ``checkpoint-blocks`` and ``selective`` (docs/design.md §6) read two labels
of a forward node (docs/formats.md, "Module structure"):

- its **block**: the instance of the model's repeated block that ran it. torch's tracer records,
  for every operation, the modules it ran inside (``nn_module_stack``: path and class, outermost
  first). The block class is the class with at least two instances whose instances together
  ran the most forward operations (``GPT2Block``, ``LlamaDecoderLayer``; a tie goes to the
  outer class), and a node's block is the path of its instance of that class;
- whether it is a **contraction**: a matrix product, a convolution or attention, the kernels
  whose outputs selective recomputation keeps.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from typing import Optional, Sequence

from torch import fx

__all__ = ["CONTRACTIONS", "blocks_of", "contractions_of"]

# aten operations (schema names without the namespace) that are contractions.
CONTRACTIONS = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "convolution", "_convolution",
    "conv2d", "conv1d", "conv3d", "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
    "_flash_attention_forward", "_efficient_attention_forward",
})


def _producer(node: fx.Node) -> fx.Node:
    """The operation behind a member of a multi-output operation's result."""
    while node.target is operator.getitem and isinstance(node.args[0], fx.Node):
        node = node.args[0]
    return node


def _op_name(node: fx.Node) -> str:
    schema = getattr(node.target, "_schema", None)
    return schema.name.split("::")[-1] if schema is not None else ""


def contractions_of(order: Sequence[Optional[fx.Node]], forward: int) -> list[bool]:
    """For each remat node (``order``, the first ``forward`` of them forward): whether it is a
    contraction's output."""
    return [i < forward and n is not None and _op_name(_producer(n)) in CONTRACTIONS
            for i, n in enumerate(order)]


def _stack(node: fx.Node) -> list[tuple[str, str]]:
    stack = node.meta.get("nn_module_stack") or {}
    out = []
    for value in stack.values():
        path, kind = value if isinstance(value, tuple) else (str(value), "")
        out.append((str(path), getattr(kind, "__qualname__", str(kind))))
    return out


def _readable(path: str) -> str:
    """``L['self'].transformer.h.0`` as ``transformer.h.0``."""
    for prefix in ("L['self'].", "L['self']"):
        if path.startswith(prefix):
            return path[len(prefix):] or "self"
    return path


def blocks_of(order: Sequence[Optional[fx.Node]], forward: int) -> list[str]:
    """For each remat node: the block instance that ran it ("" for a node outside every block,
    a backward node, or a graph without a repeated module)."""
    stacks = [_stack(_producer(n)) if i < forward and n is not None else []
              for i, n in enumerate(order)]
    instances: dict[str, set[str]] = defaultdict(set)
    covered: dict[str, int] = defaultdict(int)
    depth: dict[str, int] = {}
    for stack in stacks:
        seen = set()
        for level, (path, kind) in enumerate(stack):
            instances[kind].add(path)
            depth[kind] = min(depth.get(kind, level), level)
            if kind not in seen:
                covered[kind] += 1
                seen.add(kind)
    repeated = [k for k, paths in instances.items() if len(paths) >= 2]
    block = max(repeated, key=lambda k: (covered[k], -depth[k])) if repeated else None
    out = []
    for stack in stacks:
        path = next((p for p, k in stack if k == block), "")
        out.append(_readable(path) if path else "")
    return out
