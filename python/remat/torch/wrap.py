"""The eager path: a module whose forward and backward follow remat plans, inside autograd.

``wrap(model, budget="60%")`` returns a module that runs like ``model``. It is ``model`` under
torch.compile with remat's backend and ``compiler="aot_eager"`` (backend.py): Dynamo captures
the regions of the forward (a graph break, such as a data-dependent operation or ``.item()``,
ends one region and the Python between them runs as it is), AOTAutograd traces each region's
forward and backward, remat plans the joint graph and splits it into the forward and backward
graphs of the schedule (partition.py), and those graphs run op by op, uncompiled, inside
autograd: the parameters are their inputs, so gradients reach ``.grad`` through autograd's
AccumulateGrad, and ``loss.backward()``, DDP's gradient hooks, ``GradScaler`` and gradient
accumulation work as with any module. Each input signature (shapes, dtypes, which inputs
require grad, training mode, autocast) fails Dynamo's guards once and gets its own plan. Under
``torch.no_grad()`` the model runs as it is.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import torch

from remat import interrupt
from remat.errors import Error, UsageError
from remat.torch.backend import RematBackend
from remat.torch.storage_nodes import kept_whole
from remat.torch.partition import RegionPlan
from remat.torch.region import RegionSettings, region_settings

__all__ = ["PlannedModule", "wrap"]

# How many input signatures of one model get a plan of their own; Dynamo runs the model
# uncompiled beyond it (torch's default is 8).
RECOMPILE_LIMIT = 64


class PlannedModule(torch.nn.Module):
    """``model`` with a remat plan per compiled region and input signature (see the module
    docstring).

    ``plans`` lists the plan of every region planned so far, ``plan`` the latest one's.
    """

    def __init__(self, model: torch.nn.Module, settings: RegionSettings):
        super().__init__()
        self.module = model
        self._settings = settings
        self._backend = RematBackend(settings, "aot_eager")
        # Not a submodule: the model's parameters stay registered once, under `module`.
        object.__setattr__(self, "_compiled",
                           torch.compile(model, backend=self._backend, dynamic=False))

    @property
    def plans(self) -> list[RegionPlan]:
        return self._backend.plans

    @property
    def plan(self):
        return self._backend._partition.latest_plan(
            "call the module once (wrap plans at the first call of each input signature, or at "
            "wrap time when given example_inputs)")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if not torch.is_grad_enabled() or not any(p.requires_grad
                                                  for p in self.module.parameters()):
            return self.module(*args, **kwargs)
        from torch._dynamo import config as dynamo_config
        from torch._dynamo.exc import BackendCompilerFailed

        # Recurrent modules are traced too (Dynamo runs them eagerly unless allow_rnn), and a
        # call that traces keeps upsampling whole, as eager autograd runs it. A call that plans
        # (the first of a signature) stops on Ctrl-C wherever it lands, in Dynamo's tracing
        # too (interrupt.py).
        try:
            with interrupt.planning(), kept_whole(), \
                    dynamo_config.patch(allow_rnn=True, recompile_limit=RECOMPILE_LIMIT):
                return self._compiled(*args, **kwargs)
        except BackendCompilerFailed as failure:
            inner = failure.inner_exception
            if isinstance(inner, Error):
                raise inner.with_traceback(None) from None
            raise

    def plan_now(self, example_inputs: Sequence[Any],
                 example_kwargs: Optional[dict] = None) -> None:
        """Plans the signature of ``example_inputs`` (and keyword arguments) by running the
        forward once on them, then puts back what that run changed: buffers (batch-norm
        statistics) and the random generators. Nothing reaches ``.grad``."""
        _check_example_inputs(example_inputs)
        buffers = {name: b.clone() for name, b in self.module.named_buffers()}
        cpu_state = torch.get_rng_state()
        cuda_states = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
        try:
            self(*example_inputs, **(example_kwargs or {}))
        finally:
            with torch.no_grad():
                for name, b in self.module.named_buffers():
                    b.copy_(buffers[name])
            torch.set_rng_state(cpu_state)
            if cuda_states is not None:
                torch.cuda.set_rng_state_all(cuda_states)

    def __repr__(self) -> str:
        planned = "not planned yet" if not self.plans else str(self.plan)
        return f"PlannedModule({type(self.module).__name__}, {planned})"


def _check_example_inputs(example_inputs: Any) -> None:
    """UsageError unless ``example_inputs`` is a tuple or list of inputs the model can run on:
    planning runs the forward once on them."""
    if not isinstance(example_inputs, (tuple, list)):
        raise UsageError(f"example_inputs must be a tuple or list of the model's inputs, got "
                         f"{type(example_inputs).__name__}"
                         + ("; for one tensor x pass (x,)"
                            if isinstance(example_inputs, torch.Tensor) else ""))
    from torch._subclasses.fake_tensor import is_fake

    for i, x in enumerate(example_inputs):
        if isinstance(x, torch.Tensor) and is_fake(x):
            raise UsageError(
                f"example_inputs[{i}] is a fake tensor (FakeTensorMode): wrap plans by running "
                "the model's forward once on example_inputs, which needs real tensors; pass "
                f"tensors of the same shape and dtype (torch.zeros({tuple(x.shape)}, "
                f"dtype={x.dtype}, device={str(x.device)!r})), or leave example_inputs out and "
                "the first call plans")


def wrap(model: torch.nn.Module, example_inputs: Optional[Sequence[Any]] = None, *,
         budget: Optional[Any] = None, memory: Optional[Any] = None,
         optimizer: Optional[torch.optim.Optimizer] = None, strategy: str = "optimal",
         time_limit_s: float = 60.0, threads: int = 1, seed: int = 1,
         lower_bound: bool = True, gap: float = 1e-3, unknown_ops: str = "error",
         flops_per_byte: Union[float, str] = 1.0, workspace: bool = True,
         strict: bool = False, schedule: Optional[Any] = None,
         chunks: Union[str, int] = "auto") -> PlannedModule:
    """Returns ``model`` planned by remat, to train with ``loss.backward()`` as usual.

    Exactly one of ``budget`` (the activation budget: bytes, ``"512MiB"`` or ``"60%"`` of the
    no-rematerialization peak) or ``memory`` (device memory; the budget is what the fixed
    memory leaves: parameters, their gradients, buffers, inputs and, with ``optimizer=``, the
    optimizer's state) gives the size. ``strategy`` is any of ``remat.strategy_names()``,
    ``time_limit_s`` bounds each plan. With ``example_inputs`` the plan is made now (see
    ``PlannedModule.plan_now``); otherwise at the first call of each input signature.

    A region whose head feeds only its cross-entropy (a language model's), or with MLPs, is
    planned again with them in chunks of tokens where it has no schedule within the budget whole
    (``chunks="auto"``; a number k: always k chunks, 1: never). A region with no schedule
    within the budget either way runs the least-peak schedule found, with a
    ``remat.BudgetWarning`` (``strict=True`` raises InfeasibleBudgetError instead).
    ``schedule`` (a schedule file's path, or a list of them) reuses saved plans
    (``RegionPlan.save_schedule``) for the graphs they were made for. Raises UsageError at once
    for a bad option; CaptureError or UnknownOpError when a signature is planned, InputError
    when no schedule file was made for its graph.
    """
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    settings = region_settings(budget=budget, memory=memory, optimizer=optimizer,
                               strategy=strategy, time_limit_s=time_limit_s, threads=threads,
                               seed=seed, lower_bound=lower_bound, gap=gap,
                               unknown_ops=unknown_ops, flops_per_byte=flops_per_byte,
                               workspace=workspace, strict=strict, schedule=schedule,
                               chunks=chunks)
    planned = PlannedModule(model, settings)
    if example_inputs is not None:
        planned.plan_now(example_inputs)
    return planned
