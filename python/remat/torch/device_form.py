"""The form a model takes on a device, written in while it is traced on the meta device.

Traced on meta tensors, two operations take another form than on the device that will run the
step, so the graph (and its fingerprint) would differ:

- ``scaled_dot_product_attention``: torch picks its kernel by device; on meta tensors it runs
  the math form (a seq x seq score matrix per head). Here it calls the kernel the device runs
  (``DEVICE_ATTENTION``), whose meta kernels exist.
- ``cross_entropy``: ``nll_loss`` has a meta kernel of its own, which takes the place of its
  autograd kernel on meta tensors, so the joint graph gets no loss backward (no gradient
  reaches the logits). Here it is the log-softmax and ``nll_loss_forward`` the devices run,
  whose backward (``nll_loss_backward``, ``_log_softmax_backward_data``) is recorded.

Anything these forms do not cover (a loss with label smoothing, inputs of more than two
dimensions) runs as torch writes it. The planned forward then runs on meta tensors, so that a
region after a graph break is traced too; the random operations whose generator state the plan
saves for their recomputation run there without a state (torch keeps one for real devices).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch._C import DispatchKey

from remat.errors import UsageError

__all__ = ["DEVICES", "traced_as"]

DEVICES = ("cuda", "cpu")
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _device_inputs(query, key, value, attn_mask, enable_gqa):
    """What torch's attention hands its kernels: a boolean mask as 0 and -inf in the query's
    dtype, and grouped keys and values repeated per query head."""
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        attn_mask = torch.where(attn_mask,
                                torch.scalar_tensor(0.0, dtype=query.dtype, device=query.device),
                                torch.scalar_tensor(-float("inf"), dtype=query.dtype,
                                                    device=query.device))
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        repeat = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(repeat, dim=-3)
        value = value.repeat_interleave(repeat, dim=-3)
    return key, value, attn_mask


def _cuda_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                    scale=None, enable_gqa=False):
    """What a GPU runs for half-precision attention: the flash kernel, or the memory-efficient
    one where there is a mask."""
    key, value, attn_mask = _device_inputs(query, key, value, attn_mask, enable_gqa)
    if attn_mask is None:
        return torch.ops.aten._scaled_dot_product_flash_attention(
            query, key, value, dropout_p, is_causal, scale=scale)[0]
    return torch.ops.aten._scaled_dot_product_efficient_attention(
        query, key, value, attn_mask, True, dropout_p, is_causal, scale=scale)[0]


def _cpu_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                   scale=None, enable_gqa=False):
    """What torch runs on the CPU: its flash kernel for the CPU."""
    key, value, attn_mask = _device_inputs(query, key, value, attn_mask, enable_gqa)
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        query, key, value, dropout_p, is_causal, attn_mask=attn_mask, scale=scale)[0]


DEVICE_ATTENTION = {"cuda": _cuda_attention, "cpu": _cpu_attention}


def _cross_entropy_of(original):
    def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                      reduce=None, reduction="mean", label_smoothing=0.0):
        if (input.dim() not in (1, 2) or target.is_floating_point() or label_smoothing
                or size_average is not None or reduce is not None
                or reduction not in _REDUCTIONS):
            return original(input, target, weight, size_average, ignore_index, reduce,
                            reduction, label_smoothing)
        log_probabilities = torch.log_softmax(input, -1)
        return torch.ops.aten.nll_loss_forward(log_probabilities, target, weight,
                                               _REDUCTIONS[reduction], ignore_index)[0]

    return cross_entropy


def _meta_first(kernel, on_meta):
    """``kernel``, except on meta tensors, where ``on_meta`` runs."""
    def select(*args, **kwargs):
        if any(isinstance(a, torch.Tensor) and a.device.type == "meta" for a in args):
            return on_meta(*args, **kwargs)
        return kernel(*args, **kwargs)

    return select


@contextlib.contextmanager
def _random_operations_on_meta() -> Iterator[None]:
    """Within it, torch's operators that save and restore a generator's state for a random
    operation run it on meta tensors too (with the CPU generator's state as a stand-in)."""
    from torch._prims import rng_prims

    patched = [
        (rng_prims.run_and_save_rng_state,
         lambda op, *args, **kwargs: (torch.get_rng_state(), op(*args, **kwargs))),
        (rng_prims.run_with_rng_state,
         lambda _state, op, *args, **kwargs: op(*args, **kwargs)),
    ]
    saved = []
    for operator, on_meta in patched:
        kernel = operator.py_kernels[DispatchKey.BackendSelect]
        saved.append((operator, kernel))
        operator.py_kernels[DispatchKey.BackendSelect] = _meta_first(kernel, on_meta)
        operator._dispatch_cache.clear()
    try:
        yield
    finally:
        for operator, kernel in saved:
            operator.py_kernels[DispatchKey.BackendSelect] = kernel
            operator._dispatch_cache.clear()


@contextlib.contextmanager
def traced_as(device: str) -> Iterator[None]:
    """Within it, attention and cross-entropy take the form they take on ``device``
    ("cuda" or "cpu") also on meta tensors (see the module docstring)."""
    if device not in DEVICES:
        raise UsageError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    functional = torch.nn.functional
    saved = functional.scaled_dot_product_attention, functional.cross_entropy
    functional.scaled_dot_product_attention = DEVICE_ATTENTION[device]
    functional.cross_entropy = _cross_entropy_of(saved[1])
    try:
        with _random_operations_on_meta():
            yield
    finally:
        functional.scaled_dot_product_attention, functional.cross_entropy = saved
