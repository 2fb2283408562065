"""Planning for a device this machine does not have: ``plan_for_device`` traces the model on
the meta device (nothing is allocated, no kernel runs) in the form it takes on the device
(device_form.py), plans every region as ``wrap`` would there, and returns the plans, whose
schedule files the run on the device loads without planning again (same graph fingerprint).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional, Sequence, Union

import torch
from torch.utils import _pytree as pytree

from remat.errors import UsageError
from remat.options import check_int
from remat.torch.device_form import DEVICES, traced_as
from remat.torch.partition import RegionPlan
from remat.torch.region import region_settings
from remat.torch.step import _Step
from remat.torch.wrap import PlannedModule

__all__ = ["plan_for_device"]

Size = Union[int, str]


def _on_meta(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` when its parameters and buffers are on the meta device, else a copy there: each
    parameter and buffer stands for itself once, so that tied weights stay tied, and nothing
    of their data is copied."""
    tensors = list(model.parameters()) + list(model.buffers())
    if all(t.device.type == "meta" for t in tensors):
        return model
    memo: dict = {}
    for t in tensors:
        if id(t) not in memo:
            meta = torch.empty_like(t, device="meta")
            memo[id(t)] = (torch.nn.Parameter(meta, requires_grad=t.requires_grad)
                           if isinstance(t, torch.nn.Parameter) else meta)
    return copy.deepcopy(model, memo)


def _meta_like(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        meta = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                   device="meta")
        return meta.requires_grad_(value.requires_grad)
    return value


def plan_for_device(model: torch.nn.Module, example_inputs: Sequence[Any] = (),
                    example_kwargs: Optional[dict] = None, *, device: str = "cuda",
                    loss_fn: Optional[Callable] = None, model_inputs: Optional[int] = None,
                    budget: Optional[Size] = None,
                    memory: Optional[Size] = None,
                    optimizer: Optional[torch.optim.Optimizer] = None,
                    strategy: str = "optimal", time_limit_s: float = 60.0, threads: int = 1,
                    seed: int = 1, lower_bound: bool = True, gap: float = 1e-3,
                    unknown_ops: str = "error", flops_per_byte: float = 1.0,
                    workspace: bool = True, chunks: Union[str, int] = "auto"
                    ) -> list[RegionPlan]:
    """Plans ``model``'s training step for ``device`` ("cuda" or "cpu") on the meta device and
    returns the plan of every region (``RegionPlan``; ``save_schedule`` writes each).

    The model may be built under ``torch.device("meta")``, or it is copied there; the example
    inputs (positional and keyword) are replaced by meta tensors of their shapes and dtypes.
    Without ``loss_fn`` the regions are the model's, as ``wrap(model)`` and its own loss (a
    transformers model given ``labels=``) plan them on the device; with ``loss_fn`` they are
    the step's, as ``plan_step(model, loss_fn, inputs, kwargs, model_inputs=k)`` plans it
    (``model_inputs`` defaults to 1, as there). The other options are
    ``wrap``'s: ``memory`` is the device's memory, and ``optimizer`` (over the model's
    parameters) counts its state as fixed memory. The run on the device given the saved files
    as ``schedule=`` plans nothing again.
    """
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if device not in DEVICES:
        raise UsageError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
    if flops_per_byte == "machine":
        raise UsageError('flops_per_byte="machine" measures this machine, not the device '
                         "planned for: give the device's FLOPs per byte as a number")
    if loss_fn is not None and not callable(loss_fn):
        raise UsageError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    if not isinstance(example_inputs, (tuple, list)):
        raise UsageError("example_inputs must be a tuple or list of the model's inputs, got "
                         f"{type(example_inputs).__name__}")
    if example_kwargs is not None and not isinstance(example_kwargs, dict):
        raise UsageError(f"example_kwargs must be a dict, got {type(example_kwargs).__name__}")
    if getattr(getattr(model, "config", None), "use_cache", False) is True:
        raise UsageError(
            "the model's config has use_cache=True: set model.config.use_cache = False here and "
            "on the device (a training step has no use for the KV cache, whose lazily made "
            "tensors cannot be traced on the meta device, and the two graphs must be the same)")
    settings = region_settings(budget=budget, memory=memory, optimizer=optimizer,
                               strategy=strategy, time_limit_s=time_limit_s, threads=threads,
                               seed=seed, lower_bound=lower_bound, gap=gap,
                               unknown_ops=unknown_ops, flops_per_byte=flops_per_byte,
                               workspace=workspace, chunks=chunks)
    module = _on_meta(model)
    if loss_fn is not None:
        model_inputs = 1 if model_inputs is None else model_inputs  # plan_step's default
        module = _Step(module, loss_fn, check_int("model_inputs", model_inputs, low=0))
    elif model_inputs is not None:
        raise UsageError("model_inputs= splits the inputs between the model and loss_fn: give "
                         "it with loss_fn=")
    planned = PlannedModule(module, settings)
    args = pytree.tree_map(_meta_like, tuple(example_inputs))
    kwargs = pytree.tree_map(_meta_like, dict(example_kwargs or {}))
    with traced_as(device):
        planned(*args, **kwargs)  # the regions are planned as they compile; no kernel runs
    return planned.plans
