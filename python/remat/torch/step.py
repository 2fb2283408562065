"""A whole training step, model and loss planned together: ``plan_step`` returns a step that
runs the forward, the loss and the backward and fills ``.grad``.

The step is ``loss_fn(model(*inputs[:k]), *inputs[k:])`` as one module, planned and run by
``wrap`` (wrap.py): the same capture (Dynamo and AOTAutograd), the same partitioner and the same
execution inside autograd as ``wrap`` and ``backend``. What it adds is the loss in the planned
graph (a loss outside ``wrap``'s module is not planned) and the plan made at once, on the
example inputs. ``export_graph`` writes such a step's graph as a file for the CLI.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Sequence, Union

import torch

from remat import _core
from remat.errors import InputMismatchError, UsageError
from remat.options import check_int, check_text
from remat.torch.partition import RegionPlan
from remat.torch.plans import Plan
from remat.torch.region import region_settings
from remat.torch.wrap import PlannedModule

__all__ = ["PlannedStep", "plan_step", "compile", "export_graph"]

Size = Union[int, str]


class _Step(torch.nn.Module):
    """model + loss as one module whose forward returns the loss."""

    def __init__(self, model: torch.nn.Module, loss_fn: Callable, model_inputs: int):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn
        self.model_inputs = model_inputs

    def forward(self, *inputs: Any, **model_kwargs: Any) -> torch.Tensor:
        return _checked_loss(self.loss_fn(self.model(*inputs[:self.model_inputs],
                                                     **model_kwargs),
                                          *inputs[self.model_inputs:]))


@torch._dynamo.disable
def _checked_loss(loss: Any) -> torch.Tensor:
    """The loss, or UsageError unless it is a tensor of one element. Run outside Dynamo's
    trace (an exception raised while tracing would leave the step's frame uncompiled)."""
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise UsageError("loss_fn must return a tensor with a single element (the loss), "
                         f"got {type(loss).__name__}"
                         + (f" of shape {tuple(loss.shape)}"
                            if isinstance(loss, torch.Tensor) else ""))
    return loss


class PlannedStep:
    """A training step that follows remat's plans: ``loss = step(*inputs, **model_kwargs)``
    computes the loss and fills ``p.grad`` as ``loss.backward()`` would (gradients accumulate,
    as they do there); keyword arguments go to the model.

    ``plans`` lists the ``RegionPlan`` of every compiled region (a graph break splits the step
    into regions), ``plan`` the latest one's ``Plan`` (its figures).
    """

    def __init__(self, model: torch.nn.Module, planned: PlannedModule, inputs: int):
        self.model = model
        self._planned = planned
        self._inputs = inputs

    @property
    def plans(self) -> list[RegionPlan]:
        return self._planned.plans

    @property
    def plan(self) -> Plan:
        return self._planned.plan

    def __call__(self, *inputs: Any, **model_kwargs: Any) -> torch.Tensor:
        if len(inputs) != self._inputs:
            raise InputMismatchError(f"the step was planned for {self._inputs} inputs, got "
                                     f"{len(inputs)}")
        loss = self._planned(*inputs, **model_kwargs)
        loss.backward()
        return loss.detach()

    def save_schedule(self, path: str) -> None:
        """Writes the step's schedule file (docs/formats.md), loadable with ``schedule=path``;
        a step of several regions saves each: ``step.plans[i].save_schedule``."""
        plans = self.plans
        if len(plans) != 1:
            raise UsageError(f"the step compiled into {len(plans)} regions; save each with "
                             "step.plans[i].save_schedule(path)")
        plans[0].save_schedule(path)

    def __repr__(self) -> str:
        latest = self.plans[-1] if self.plans else "-"
        return f"PlannedStep({type(self.model).__name__}, {latest})"


def plan_step(model: torch.nn.Module, loss_fn: Callable, example_inputs: Sequence[Any],
              example_kwargs: Optional[dict] = None, *, budget: Optional[Size] = None,
              memory: Optional[Size] = None,
              optimizer: Optional[torch.optim.Optimizer] = None, strategy: str = "optimal",
              time_limit_s: float = 60.0, model_inputs: int = 1, schedule: Any = None,
              strict: bool = False, threads: int = 1, seed: int = 1, lower_bound: bool = True,
              gap: float = 1e-3, unknown_ops: str = "error",
              flops_per_byte: Union[float, str] = 1.0, workspace: bool = True,
              chunks: Union[str, int] = "auto") -> PlannedStep:
    """Plans ``model``'s training step with its loss, now, on ``example_inputs``, and returns a
    step that follows the plan.

    The step computes ``loss_fn(model(*inputs[:model_inputs], **kwargs),
    *inputs[model_inputs:])`` (``example_kwargs``: the model's keyword arguments) and the
    gradients of every parameter, and of every input, that requires one. The options are
    ``wrap``'s (``budget`` or ``memory``, ``optimizer``, ``strategy``, ``time_limit_s`` per
    region, ``schedule``, ``strict``, ``chunks`` ...). Nothing reaches ``.grad`` while
    planning; buffers and the random generators are put back. Raises UsageError for a bad option, CaptureError,
    UnknownOpError or InputError while planning, InfeasibleBudgetError with ``strict=True``.
    """
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not callable(loss_fn):
        raise UsageError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    check_int("model_inputs", model_inputs, low=0)
    settings = region_settings(budget=budget, memory=memory, optimizer=optimizer,
                               strategy=strategy, time_limit_s=time_limit_s, threads=threads,
                               seed=seed, lower_bound=lower_bound, gap=gap,
                               unknown_ops=unknown_ops, flops_per_byte=flops_per_byte,
                               workspace=workspace, strict=strict, schedule=schedule,
                               chunks=chunks)
    if example_kwargs is not None and not isinstance(example_kwargs, dict):
        raise UsageError(f"example_kwargs must be a dict, got {type(example_kwargs).__name__}")
    planned = PlannedModule(_Step(model, loss_fn, model_inputs), settings)
    planned.plan_now(example_inputs, example_kwargs)
    return PlannedStep(model, planned, len(example_inputs))


def export_graph(model: torch.nn.Module, loss_fn: Callable, example_inputs: Sequence[Any],
                 path: str, *, model_inputs: int = 1, unknown_ops: str = "error",
                 flops_per_byte: float = 1.0, workspace: bool = True,
                 name: str = "") -> _core.Graph:
    """Captures the training step as ``plan_step`` does and writes its remat graph file for the
    CLI (``remat solve --graph path``). Returns the graph. The step must compile into one
    region (UsageError otherwise: a graph break splits it)."""
    check_text("name", name)
    step = plan_step(model, loss_fn, example_inputs, budget="100%", strategy="checkpoint-all",
                     lower_bound=False, model_inputs=model_inputs, unknown_ops=unknown_ops,
                     flops_per_byte=flops_per_byte, workspace=workspace)
    plans = step.plans
    if len(plans) != 1:
        raise UsageError(f"the step compiled into {len(plans)} regions (a graph break splits "
                         "it); export_graph writes one graph: remove the break, or save each "
                         "region's graph from plan_step(...).plans[i].graph")
    graph = plans[0].graph
    if name:
        graph = _core.Graph(list(graph.nodes), graph.edges, graph.cost_unit, name)
    graph.save(path)
    return graph


def compile(*args: Any, **kwargs: Any) -> PlannedStep:  # noqa: A001 (the former name)
    """The former name of ``plan_step``: it is not ``torch.compile``. For ``torch.compile`` use
    ``backend``; for ``loss.backward()`` in your own loop, ``wrap``."""
    warnings.warn("remat.torch.compile is renamed remat.torch.plan_step (it does not use "
                  "torch.compile); for torch.compile use backend=remat.torch.backend(...), for "
                  "loss.backward() in your own loop remat.torch.wrap(...)", DeprecationWarning,
                  stacklevel=2)
    return plan_step(*args, **kwargs)
