"""A whole training step planned and run by remat: capture the step (model and loss), plan it
within a memory budget, run the plan op by op. ``plan_step`` returns a ``PlannedStep`` that
fills ``.grad`` itself; for ``loss.backward()`` in your own loop see ``wrap`` and ``backend``.
``compile`` and ``CompiledStep`` are this module's former names, kept for one release."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import torch

from remat import _core, interrupt, planning
from remat.errors import (InfeasibleBudgetError, InputError, InputMismatchError, UsageError)
from remat.options import (check_bool, check_choice, check_int, check_number, check_seed,
                           check_strategy, check_text)
from remat.planning import _size_text
from remat.torch.capture import CapturedStep, capture
from remat.torch.costs import COST_UNITS, UNKNOWN_OPS, check_cost_options, flop_costs
from remat.torch.execute import RunStats, run_plan

__all__ = ["Plan", "PlannedStep", "CompiledStep", "plan_step", "compile", "export_graph"]

Size = Union[int, str]


@dataclass(frozen=True)
class Plan:
    """The schedule a step follows, with the simulator's figures.

    ``cost`` and ``no_remat_cost`` are in ``cost_unit``; ``overhead`` is their ratio. Bytes are
    activation bytes (parameters, gradients, buffers and inputs are fixed memory, outside the
    budget). ``lower_bound`` is a proven lower bound on any schedule's cost within the budget,
    ``gap`` the schedule's relative distance to it (None when no bound was proven).
    """

    strategy: str
    status: str
    cost: float
    no_remat_cost: float
    overhead: float
    predicted_peak_bytes: int
    budget_bytes: int
    no_remat_peak_bytes: int
    fixed_bytes: int
    lower_bound: Optional[float]
    gap: Optional[float]
    cost_unit: str
    nodes: int
    recomputations: int

    def __str__(self) -> str:
        gap = "-" if self.gap is None else f"{100 * self.gap:.1f}%"
        bound = "-" if self.lower_bound is None else f"{self.lower_bound:.6g}"
        return (f"{self.strategy} ({self.status}): cost {self.cost:.6g} {self.cost_unit} "
                f"({self.overhead:.3f}x), predicted peak "
                f"{_core.format_bytes(self.predicted_peak_bytes)} of budget "
                f"{_core.format_bytes(self.budget_bytes)} (no-remat peak "
                f"{_core.format_bytes(self.no_remat_peak_bytes)}), lower bound {bound}, "
                f"gap {gap}, {self.recomputations} recomputations over {self.nodes} nodes")


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else (1.0 if a == b else math.inf)


def _fixed_bytes(model: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> int:
    """Parameters, buffers, the inputs and the gradients of those that require one: resident
    for the whole step."""
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    grads = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    inputs_bytes = sum(x.numel() * x.element_size() * (2 if x.requires_grad else 1)
                       for x in inputs)  # an input that requires grad keeps its .grad too
    return params + grads + buffers + inputs_bytes


class PlannedStep:
    """A training step that follows a remat plan. Call it like the model's step:
    ``loss = step(*inputs)`` fills ``p.grad`` as ``loss.backward()`` would."""

    def __init__(self, model: torch.nn.Module, captured: CapturedStep, graph: _core.Graph,
                 schedule: _core.Schedule, plan: Plan, *, solver_status: str = "",
                 lower_bound: Optional[float] = None):
        self.model = model
        self.captured = captured
        self.graph = graph
        self.schedule = schedule
        self.plan = plan
        # What the schedule file records: the solver's verdict ("" for heuristics) and the
        # best bound known at the budget (a loaded file's own, when the plan has none).
        self._solver_status = solver_status
        self._lower_bound = plan.lower_bound if plan.lower_bound is not None else lower_bound
        self.operations = _core.build_plan(graph, schedule)
        self.last_run: Optional[RunStats] = None

    def _check_inputs(self, inputs: Sequence[Any]) -> None:
        specs = self.captured.input_specs
        if len(inputs) != len(specs):
            raise InputMismatchError(f"the step was compiled for {len(specs)} inputs, got "
                                     f"{len(inputs)}")
        for i, (x, spec) in enumerate(zip(inputs, specs)):
            if not isinstance(x, torch.Tensor):
                raise InputMismatchError(f"input {i} is a {type(x).__name__}, not a tensor")
            if x.device != spec.device:
                raise InputMismatchError(f"input {i} is on {x.device}, but the plan was made for "
                                         f"inputs on {spec.device}")
            if tuple(x.shape) != spec.shape or x.dtype != spec.dtype:
                raise InputMismatchError(
                    f"input {i} has shape {tuple(x.shape)} and dtype {x.dtype}, but the plan was "
                    f"made for shape {spec.shape} and dtype {spec.dtype}; compile a step for "
                    "these inputs")
            if x.requires_grad != spec.requires_grad:
                raise InputMismatchError(
                    f"input {i} has requires_grad={x.requires_grad}, but the plan was made for "
                    f"requires_grad={spec.requires_grad} (its gradient is part of the graph); "
                    "compile a step for these inputs")

    def __call__(self, *inputs: torch.Tensor) -> torch.Tensor:
        self._check_inputs(inputs)
        loss, stats = run_plan(self.captured, self.operations,
                               dict(self.model.named_parameters()),
                               dict(self.model.named_buffers()), inputs)
        self.last_run = stats
        return loss

    def save_schedule(self, path: str) -> None:
        """Writes the schedule file (docs/formats.md), loadable with ``schedule=path``, with
        the solver's status and the lower bound as ``remat solve -o`` records them."""
        _core.save_schedule(self.graph, self.schedule, self.plan.strategy,
                            self.plan.budget_bytes, path, solver_status=self._solver_status,
                            lower_bound_cost=self._lower_bound)

    def __repr__(self) -> str:
        return f"PlannedStep({self.plan})"


def _costs(captured: CapturedStep, model: torch.nn.Module, inputs: Sequence[torch.Tensor],
           costs: str, unknown_ops: str, flops_per_byte: float) -> list[float]:
    if costs == "flops":
        return flop_costs(captured, unknown_ops=unknown_ops, flops_per_byte=flops_per_byte)
    if costs == "profile":
        from remat.torch.profile import profile_costs
        return profile_costs(captured, model, inputs)
    raise UsageError(f"costs must be one of {', '.join(COST_UNITS)}, got {costs!r}")


def _captured_graph(model, loss_fn, example_inputs, model_inputs, costs, unknown_ops,
                    flops_per_byte, name):
    check_int("model_inputs", model_inputs, low=0)
    check_text("name", name)
    check_choice("costs", costs, tuple(COST_UNITS))
    check_cost_options(flops_per_byte, unknown_ops)
    captured = capture(model, loss_fn, example_inputs, model_inputs=model_inputs)
    node_costs = _costs(captured, model, example_inputs, costs, unknown_ops, flops_per_byte)
    graph = captured.to_graph(node_costs, COST_UNITS[costs], name or type(model).__name__)
    return captured, graph


def export_graph(model: torch.nn.Module, loss_fn: Callable, example_inputs: Sequence[torch.Tensor],
                 path: str, *, model_inputs: int = 1, costs: str = "flops",
                 unknown_ops: str = "error", flops_per_byte: float = 1.0,
                 name: str = "") -> _core.Graph:
    """Captures the training step and writes it as a remat graph file for the CLI
    (``remat solve --graph path``). Returns the graph."""
    with interrupt.planning():
        _, graph = _captured_graph(model, loss_fn, example_inputs, model_inputs, costs,
                                   unknown_ops, flops_per_byte, name)
    graph.save(path)
    return graph


def plan_step(model: torch.nn.Module, loss_fn: Callable, example_inputs: Sequence[torch.Tensor],
            *, memory: Optional[Size] = None, budget: Optional[Size] = None,
            strategy: str = "optimal", time_limit_s: Optional[float] = None,
            time_limit: Optional[float] = None, costs: str = "flops",
            schedule: Optional[str] = None, model_inputs: int = 1, unknown_ops: str = "error",
            flops_per_byte: float = 1.0, threads: int = 1, seed: int = 1,
            lower_bound: bool = True) -> PlannedStep:
    """Captures ``model``'s training step, plans it and returns a step that follows the plan.

    The step computes ``loss_fn(model(*inputs[:model_inputs]), *inputs[model_inputs:])`` and the
    gradients of every parameter, and of every input, that requires one. Exactly one of
    ``memory`` (device memory: bytes or a string such as ``"16GiB"`` or ``"512MB"``; the
    activation budget is what remains after the fixed memory of parameters, gradients, buffers
    and inputs) or ``budget`` (the activation budget: a size or a percentage of the
    no-rematerialization peak, ``"60%"``) gives the size. ``strategy`` is any of
    ``remat.strategy_names()``; ``schedule`` loads a saved schedule file instead of solving.
    ``time_limit_s`` (default 60; ``time_limit`` is accepted as its alias) bounds the whole
    call: capture, costs, the lower bound and the strategy together. ``costs`` is ``"flops"``
    or ``"profile"`` (measured milliseconds). Every option is checked before the capture.

    Raises CaptureError, UnknownOpError, InfeasibleBudgetError, UsageError or InputError.
    """
    started = _now()
    limit = _time_limit(time_limit_s, time_limit)
    budget_text, memory_text = _check_options(memory, budget, strategy, costs, unknown_ops,
                                              schedule, limit, threads)
    check_cost_options(flops_per_byte, unknown_ops)
    check_seed(seed)
    check_bool("lower_bound", lower_bound)
    document = load_schedule_file(schedule) if schedule is not None else None

    with interrupt.planning():  # Ctrl-C stops the capture wherever it lands (interrupt.py)
        captured, graph = _captured_graph(model, loss_fn, example_inputs, model_inputs, costs,
                                          unknown_ops, flops_per_byte, "")
    fixed = _fixed_bytes(model, example_inputs)
    if document is not None:
        return _loaded_step(model, captured, graph, schedule, document, budget_text,
                            memory_text, fixed)
    resolved = _core._resolve_budget(graph, budget_text, memory_text, fixed)
    budget_bytes = resolved.activation_bytes
    minimum = _core.minimum_peak_lower_bound(graph)
    if budget_bytes < minimum:
        raise InfeasibleBudgetError(
            f"the activation budget {_core.format_bytes(budget_bytes)} is below the minimum "
            f"peak {_core.format_bytes(minimum)} that any schedule of this step needs (one "
            "operation's output together with its inputs)")
    spent = _now() - started
    if spent >= limit:
        raise UsageError(f"capturing the step took {spent:.1f} s of time_limit_s={limit:g}, "
                         "leaving no time to plan it; raise time_limit_s")
    report = planning.plan(graph, budget=budget_bytes, strategies=[strategy],
                           time_limit_s=limit - spent, threads=threads, seed=seed,
                           lower_bound=lower_bound)
    row = report.rows[0]
    if not row.fits:
        raise no_schedule_error(
            strategy, budget_bytes, row,
            " (remat.plan(graph, budget=\"min\") on the graph of remat.torch.export_graph finds "
            "the smallest budget and a bound on it)")
    plan = _plan_of(graph, row.schedule, strategy, row.solver_status or "heuristic",
                    budget_bytes, report.no_remat_cost, report.no_remat_peak_bytes, fixed,
                    report.lower_bound)
    return PlannedStep(model, captured, graph, row.schedule, plan,
                        solver_status=row.solver_status)


# The clock that time_limit_s is measured on (a test may replace it).
_now = time.monotonic


def no_schedule_error(strategy: str, budget_bytes: int, row: planning.PlanRow,
                      hint: str = "") -> InfeasibleBudgetError:
    """The error for a strategy that found no schedule within the budget: what it found."""
    found = (f"its best schedule peaks at {_core.format_bytes(row.peak_bytes)}"
             if row.peak_bytes is not None else "it found no schedule")
    return InfeasibleBudgetError(
        f"strategy {strategy} found no schedule within the activation budget "
        f"{_core.format_bytes(budget_bytes)}: {found}"
        + (f" ({row.solver_status}; {row.note})" if row.solver_status else "")
        + "; try a larger budget, a longer time_limit_s or another strategy" + hint)


def _time_limit(time_limit_s: Optional[float], time_limit: Optional[float]) -> float:
    if time_limit is not None and time_limit_s is not None:
        raise UsageError("give time_limit_s or its alias time_limit, not both")
    limit = time_limit_s if time_limit_s is not None else time_limit
    limit = 60.0 if limit is None else limit
    return check_number("time_limit_s", limit, low=0, above_low=True)


def _check_options(memory, budget, strategy, costs, unknown_ops, schedule, limit,
                   threads) -> tuple[str, str]:
    """Checks what compile can check without the graph, so that a typo fails before the
    capture, and returns the size texts (memory is device memory: a size, never a percentage,
    as for ``remat-run train --memory``)."""
    if (memory is None) == (budget is None) and schedule is None:
        raise UsageError("give exactly one of memory= (device memory) or budget= (activation "
                         "budget)")
    if memory is not None and budget is not None:
        raise UsageError("give memory= or budget=, not both")
    budget_text = _size_text(budget, "budget")
    memory_text = _size_text(memory, "memory", percent=False)
    check_strategy(strategy)
    check_choice("costs", costs, tuple(COST_UNITS))
    check_choice("unknown_ops", unknown_ops, UNKNOWN_OPS)
    _core._check_settings(limit, check_int("threads", threads))
    return budget_text, memory_text


def load_schedule_file(path: str) -> _core.ScheduleDocument:
    """A schedule file given as ``schedule=``, read as ``remat.load_schedule`` reads it; a file
    whose schedule peaks over the budget it records is an InputError whose remedy is one that
    ``plan_step``, ``wrap`` and ``backend`` offer (they have no ``allow_over_budget=``)."""
    document = _core.load_schedule(path, allow_over_budget=True)
    budget = document.budget_bytes
    if budget is not None:
        peak = _core.simulate(document.graph, document.schedule).peak_bytes
        if peak > budget:
            raise InputError(
                f"schedule={path}: the schedule peaks at {_core.format_bytes(peak)} ({peak} B), "
                f"over the budget {_core.format_bytes(budget)} ({budget} B) that the file "
                "records, so the file was changed after it was saved or written elsewhere; "
                "save the plan again with save_schedule(), or plan without schedule=")
    return document


def _plan_of(graph: _core.Graph, schedule: _core.Schedule, strategy: str, status: str,
             budget_bytes: Optional[int], no_remat_cost: float, no_remat_peak_bytes: int,
             fixed: int, bound: Optional[float]) -> Plan:
    """The step's Plan from the simulator's figures for ``schedule`` (the source of truth)."""
    simulated = _core.simulate(graph, schedule)
    if budget_bytes is not None and simulated.peak_bytes > budget_bytes:
        raise InfeasibleBudgetError(
            f"the schedule peaks at {_core.format_bytes(simulated.peak_bytes)}, over the "
            f"activation budget {_core.format_bytes(budget_bytes)}")
    gap = None if bound is None else planning.relative_gap(simulated.cost, bound)
    return Plan(strategy=strategy, status=status, cost=simulated.cost,
                no_remat_cost=no_remat_cost, overhead=_ratio(simulated.cost, no_remat_cost),
                predicted_peak_bytes=simulated.peak_bytes,
                budget_bytes=budget_bytes if budget_bytes is not None else simulated.peak_bytes,
                no_remat_peak_bytes=no_remat_peak_bytes, fixed_bytes=fixed, lower_bound=bound,
                gap=None if gap is None or math.isnan(gap) else gap, cost_unit=graph.cost_unit,
                nodes=len(graph), recomputations=simulated.evaluations - len(graph))


def _loaded_step(model, captured, graph, path, document, budget_text, memory_text,
                 fixed) -> PlannedStep:
    """A step that follows a saved schedule file instead of solving."""
    if document.graph.fingerprint != graph.fingerprint:
        raise InputError(f"{path}: the schedule was made for a different graph "
                         f"({document.graph.name or 'unnamed'}, {len(document.graph)} nodes) "
                         f"than this step ({len(graph)} nodes); solve again")
    no_remat = _core.run_strategy("checkpoint-all", graph, 0)
    if not budget_text and not memory_text:
        budget_bytes = document.budget_bytes
    else:
        budget_bytes = _core._resolve_budget(graph, budget_text, memory_text,
                                             fixed).activation_bytes
    plan = _plan_of(graph, document.schedule, document.strategy or "loaded", "loaded",
                    budget_bytes, no_remat.cost, no_remat.peak_bytes, fixed, None)
    return PlannedStep(model, captured, graph, document.schedule, plan,
                        solver_status=document.solver_status,
                        lower_bound=document.lower_bound_cost)


CompiledStep = PlannedStep  # the former name, kept for one release


def compile(*args: Any, **kwargs: Any) -> PlannedStep:  # noqa: A001 (the former name)
    """The former name of ``plan_step``, kept for one release: it is not ``torch.compile``.
    For ``torch.compile`` use ``backend``; for ``loss.backward()`` without compiling, ``wrap``."""
    warnings.warn("remat.torch.compile is renamed remat.torch.plan_step (it does not use "
                  "torch.compile); for torch.compile use backend=remat.torch.backend(...), for "
                  "loss.backward() in your own loop remat.torch.wrap(...)", DeprecationWarning,
                  stacklevel=2)
    return plan_step(*args, **kwargs)
