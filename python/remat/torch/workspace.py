"""Kernel workspace of captured operations: memory a kernel allocates and releases while it
runs, above its outputs (docs/design.md §3, ``workspace_bytes``). The simulator adds it to the
live bytes at the node's computation, so a plan's predicted peak counts it, as the CLI's graphs
do (docs/zoo.md, "Workspace").

On the CPU, PyTorch runs convolutions through oneDNN, which makes blocked copies of their
operands. Measured with the profiler's memory events on torch 2.13 (docs/python.md, "Kernel
workspace"), over 3x3, 7x7 and 1x1 convolutions with stride 1 and 2, these bounds held:

- ``convolution``: input + weight + output;
- ``convolution_backward``: twice (input + output gradient), plus the weight.

They are upper bounds: some shapes need half of them. Every other operation, and every
operation on a GPU (whose libraries size their workspace from the memory left free), has none.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import fx

__all__ = ["node_workspace_bytes"]


def _bytes(value: Any) -> int:
    if isinstance(value, fx.Node):
        value = value.meta.get("val")
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    return 0


def _on_cpu(node: fx.Node) -> bool:
    val = node.meta.get("val")
    values = list(val) if isinstance(val, (tuple, list)) else [val]
    return any(isinstance(v, torch.Tensor) and v.device.type == "cpu" for v in values)


def node_workspace_bytes(node: fx.Node) -> int:
    """The workspace of one operation (see the module docstring)."""
    target = getattr(node.target, "overloadpacket", None)
    if target is None or not _on_cpu(node):
        return 0
    if target is torch.ops.aten.convolution:
        x, weight = node.args[0], node.args[1]
        return _bytes(x) + _bytes(weight) + _bytes(node)
    if target is torch.ops.aten.convolution_backward:
        grad_output, x, weight = node.args[0], node.args[1], node.args[2]
        return 2 * (_bytes(x) + _bytes(grad_output)) + _bytes(weight)
    return 0
