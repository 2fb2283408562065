"""Kernel workspace of captured operations: memory a kernel allocates and releases while it
runs, above its outputs (docs/design.md §3, ``workspace_bytes``). The simulator adds it to the
live bytes at the node's computation, so a plan's predicted peak counts it, as the CLI's graphs
do (docs/zoo.md, "Workspace").

On the CPU, PyTorch runs convolutions through oneDNN or ATen's own kernels, which make copies
of their operands whose size depends on the shapes, the layout and the CPU (a 512-channel 3x3
convolution on 2x2 inputs allocates nine times its weight in its backward on one machine). So
each distinct convolution (operation, shapes, strides, dtype and arguments) is run once on this
machine, on random operands outside any fake mode, and its workspace is the largest net
allocation the profiler's memory events saw during the call, less the call's outputs; the
result is cached for the process.

When that cannot be measured (a profiler is already running, the operands are not on the CPU),
the bounds measured on torch 2.13 over 3x3, 7x7 and 1x1 convolutions with at least 8 channels
stand in: ``convolution``: input + weight + output; ``convolution_backward``: twice (input +
output gradient), plus the weight. Every other operation, and every operation on a GPU (whose
libraries size their workspace from the memory left free), has none.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import torch
from torch import fx

__all__ = ["node_workspace_bytes", "measured_workspace_bytes", "quiet_profiler"]

# (operation, operands' sizes, strides and dtypes, other arguments) -> measured workspace
_MEASURED: dict[tuple, int] = {}


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


def _bound_bytes(node: fx.Node, target: Any) -> int:
    """The fitted bounds of the module docstring."""
    if target is torch.ops.aten.convolution:
        x, weight = node.args[0], node.args[1]
        return _bytes(x) + _bytes(weight) + _bytes(node)
    grad_output, x, weight = node.args[0], node.args[1], node.args[2]
    return 2 * (_bytes(x) + _bytes(grad_output)) + _bytes(weight)


def _key(value: Any) -> Any:
    if isinstance(value, fx.Node):
        value = value.meta.get("val")
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.stride()), value.dtype,
                value.device.type)
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    return value


def _operand(value: Any) -> Any:
    """A real CPU operand like the traced one: same sizes, strides and dtype, random values."""
    if isinstance(value, fx.Node):
        value = value.meta.get("val")
    if isinstance(value, torch.Tensor):
        real = torch.empty_strided(tuple(value.shape), tuple(value.stride()), dtype=value.dtype)
        return real.normal_() if real.is_floating_point() else real.zero_()
    if isinstance(value, (list, tuple)):
        return type(value)(_operand(v) for v in value)
    return value


def _outputs_bytes(result: Any) -> int:
    if isinstance(result, torch.Tensor):
        return result.numel() * result.element_size()
    if isinstance(result, (list, tuple)):
        return sum(_outputs_bytes(r) for r in result)
    return 0


def quiet_profiler() -> None:
    """Keeps torch.profiler's engine (Kineto) from printing ``USDT: ... profiler_start`` and
    ``profiler_stop`` on stderr at every profiling session (torch 2.13), as the measurements
    here and in the benchmarks open one per convolution or step on the user's behalf. Kineto
    reads ``KINETO_LOG_LEVEL`` once, when the process first profiles; 6 is above its highest
    level (its own errors included: a failed session shows as missing events instead). A value
    the user set is kept, and a process that profiled before keeps the level it started with."""
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")


def measured_workspace_bytes(node: fx.Node) -> Optional[int]:
    """The workspace of one convolution measured on this machine, or None when it cannot be
    measured here (see the module docstring)."""
    from torch.profiler import ProfilerActivity, profile
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    key = (str(node.target), _key(node.args), _key(node.kwargs))
    if key in _MEASURED:
        return _MEASURED[key]
    if torch._C._autograd._profiler_enabled():
        return None  # the user's own profiler is running: one profiler at a time
    with unset_fake_temporarily(), torch.no_grad():
        args = _operand(node.args)
        kwargs = {k: _operand(v) for k, v in node.kwargs.items()}
        node.target(*args, **kwargs)  # warm-up: oneDNN builds and caches its primitive
        quiet_profiler()
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            result = node.target(*args, **kwargs)
        events = sorted((e for e in prof.profiler.kineto_results.events()
                         if e.name() == "[memory]"), key=lambda e: e.start_ns())
        level = peak = 0
        for e in events:
            level += e.nbytes()
            peak = max(peak, level)
        measured = max(0, peak - _outputs_bytes(result))
    _MEASURED[key] = measured
    return measured


def node_workspace_bytes(node: fx.Node) -> int:
    """The workspace of one operation (see the module docstring)."""
    target = getattr(node.target, "overloadpacket", None)
    if target not in (torch.ops.aten.convolution, torch.ops.aten.convolution_backward) or \
            not _on_cpu(node):
        return 0
    measured = measured_workspace_bytes(node)
    return _bound_bytes(node, target) if measured is None else measured
