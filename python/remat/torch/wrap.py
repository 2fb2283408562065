"""The eager path: a module whose forward and backward follow a remat plan, inside autograd.

``wrap(model, budget="60%")`` returns a module that runs like ``model``. The first call for
each input signature (shapes, dtypes, which inputs require grad, training mode and autocast)
traces the model's forward and backward with AOTAutograd, plans the joint graph with remat
and splits it into the forward and backward graphs of the schedule (partition.py); later calls
with that signature run them. The two graphs run op by op, uncompiled, as the forward and
backward of one ``autograd.Function``: the parameters are its inputs, so their gradients reach
``.grad`` through autograd's AccumulateGrad, and ``loss.backward()``, DDP's gradient hooks,
``GradScaler`` and gradient accumulation work as with any module. Under ``torch.no_grad()``
the model runs as it is.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch
from torch.utils import _pytree as pytree

from remat.errors import UsageError
from remat.torch.capture import kept_whole
from remat.torch.partition import RegionPlan, RematPartition
from remat.torch.region import RegionSettings, plan_region, region_settings

__all__ = ["PlannedModule", "wrap"]


def _boxed_eager(gm: torch.fx.GraphModule, _example_inputs: Any):
    """Runs the graph as generated Python code in AOTAutograd's boxed convention: the argument
    list is cleared once read, so each input is released after its last use, like any value."""
    gm.graph.set_codegen(torch.fx.graph._BoxedCodeGen())
    gm.recompile()

    def run(args: list) -> Any:
        return gm(args)

    run._boxed_call = True  # type: ignore[attr-defined]
    return run


def _autocast_state() -> tuple:
    state = []
    for device in ("cpu", "cuda"):
        enabled = torch.is_autocast_enabled(device)
        state.append((device, enabled, torch.get_autocast_dtype(device) if enabled else None))
    return tuple(state)


def _signature(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.stride()), value.dtype, value.device,
                value.requires_grad)
    return ("value", repr(value))


class PlannedModule(torch.nn.Module):
    """``model`` with a remat plan per input signature (see the module docstring).

    ``plans`` lists the plan of every signature traced so far, ``plan`` the latest one's.
    """

    def __init__(self, model: torch.nn.Module, settings: RegionSettings):
        super().__init__()
        self.module = model
        self._settings = settings
        self._functions: dict[Any, Any] = {}
        self._partition = RematPartition(lambda joint: plan_region(settings, joint))

    @property
    def plans(self) -> list[RegionPlan]:
        return list(self._partition.plans)

    @property
    def plan(self):
        return self._partition.latest_plan(
            "call the module once (wrap plans at the first call of each input signature, or at "
            "wrap time when given example_inputs)")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if not torch.is_grad_enabled() or not any(p.requires_grad
                                                  for p in self.module.parameters()):
            return self.module(*args, **kwargs)
        leaves, spec = pytree.tree_flatten((args, kwargs))
        key = (str(spec), tuple(_signature(x) for x in leaves), self.module.training,
               _autocast_state(),
               tuple(p.requires_grad for p in self.module.parameters()))
        function = self._functions.get(key)
        params = dict(self.module.named_parameters(remove_duplicate=False))
        buffers = dict(self.module.named_buffers(remove_duplicate=False))
        if function is None:
            function = self._trace()
            with kept_whole():  # the first call traces
                result = function(params, buffers, *args, **kwargs)
            self._functions[key] = function
            return result
        return function(params, buffers, *args, **kwargs)

    def _trace(self):
        from torch._functorch.aot_autograd import aot_function

        module = self.module

        def functional(params: dict, buffers: dict, *args: Any, **kwargs: Any) -> Any:
            return torch.func.functional_call(module, {**params, **buffers}, args, kwargs)

        count = len(dict(module.named_parameters(remove_duplicate=False))) + \
            len(dict(module.named_buffers(remove_duplicate=False)))
        return aot_function(functional, fw_compiler=_boxed_eager, bw_compiler=_boxed_eager,
                            partition_fn=self._partition, num_params_buffers=count)

    def plan_now(self, example_inputs: Sequence[Any]) -> None:
        """Plans the signature of ``example_inputs`` by running the forward once on them, then
        puts back what that run changed: buffers (batch-norm statistics) and the random
        generators. Nothing reaches ``.grad``."""
        buffers = {name: b.clone() for name, b in self.module.named_buffers()}
        cpu_state = torch.get_rng_state()
        cuda_states = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
        try:
            self(*example_inputs)
        finally:
            with torch.no_grad():
                for name, b in self.module.named_buffers():
                    b.copy_(buffers[name])
            torch.set_rng_state(cpu_state)
            if cuda_states is not None:
                torch.cuda.set_rng_state_all(cuda_states)

    def __repr__(self) -> str:
        planned = "not planned yet" if not self._partition.plans else str(self.plan)
        return f"PlannedModule({type(self.module).__name__}, {planned})"


def wrap(model: torch.nn.Module, example_inputs: Optional[Sequence[Any]] = None, *,
         budget: Optional[Any] = None, memory: Optional[Any] = None,
         optimizer: Optional[torch.optim.Optimizer] = None, strategy: str = "optimal",
         time_limit_s: float = 60.0, threads: int = 1, seed: int = 1,
         lower_bound: bool = True, gap: float = 1e-3, unknown_ops: str = "error",
         flops_per_byte: float = 1.0, workspace: bool = True) -> PlannedModule:
    """Returns ``model`` planned by remat, to train with ``loss.backward()`` as usual.

    Exactly one of ``budget`` (the activation budget: bytes, ``"512MiB"`` or ``"60%"`` of the
    no-rematerialization peak) or ``memory`` (device memory; the budget is what the fixed
    memory leaves: parameters, their gradients, buffers, inputs and, with ``optimizer=``, the
    optimizer's state) gives the size. ``strategy`` is any of ``remat.strategy_names()``,
    ``time_limit_s`` bounds each plan. With ``example_inputs`` the plan is made now (see
    ``PlannedModule.plan_now``); otherwise at the first call of each input signature.

    Raises UsageError at once for a bad option; CaptureError, UnknownOpError or
    InfeasibleBudgetError when a signature is planned.
    """
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    settings = region_settings(budget=budget, memory=memory, optimizer=optimizer,
                               strategy=strategy, time_limit_s=time_limit_s, threads=threads,
                               seed=seed, lower_bound=lower_bound, gap=gap,
                               unknown_ops=unknown_ops, flops_per_byte=flops_per_byte,
                               workspace=workspace)
    planned = PlannedModule(model, settings)
    if example_inputs is not None:
        planned.plan_now(example_inputs)
    return planned
