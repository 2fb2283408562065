"""What a plan reports (``Plan``: the schedule's figures, re-simulated) and the checks every
planning entry point shares: the time limit, schedule files, and the error for a strategy that
found nothing within the budget."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from remat import _core, planning
from remat.errors import InfeasibleBudgetError, InputError
from remat.options import check_number

__all__ = ["Plan"]


@dataclass(frozen=True)
class Plan:
    """The schedule a region follows, with the simulator's figures.

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
    # A least-peak plan's (status "least-peak"): a proven lower bound on the peak of every
    # program of the region's graph, and the predicted peak's relative distance to it.
    peak_lower_bound_bytes: Optional[int] = None
    peak_gap: Optional[float] = None

    def __str__(self) -> str:
        if self.peak_lower_bound_bytes is not None:
            gap = "-" if self.peak_gap is None else f"{100 * self.peak_gap:.1f}%"
            bounds = (f"peak lower bound {_core.format_bytes(self.peak_lower_bound_bytes)}, "
                      f"peak gap {gap}")
        else:
            gap = "-" if self.gap is None else f"{100 * self.gap:.1f}%"
            bound = "-" if self.lower_bound is None else f"{self.lower_bound:.6g}"
            bounds = f"lower bound {bound}, gap {gap}"
        return (f"{self.strategy} ({self.status}): cost {self.cost:.6g} {self.cost_unit} "
                f"({self.overhead:.3f}x), predicted peak "
                f"{_core.format_bytes(self.predicted_peak_bytes)} of budget "
                f"{_core.format_bytes(self.budget_bytes)} (no-remat peak "
                f"{_core.format_bytes(self.no_remat_peak_bytes)}), {bounds}, "
                f"{self.recomputations} recomputations over {self.nodes} nodes")


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else (1.0 if a == b else math.inf)


def simulated_plan(graph: _core.Graph, schedule: _core.Schedule, strategy: str, status: str,
                   budget_bytes: Optional[int], no_remat_cost: float, no_remat_peak_bytes: int,
                   fixed: int, bound: Optional[float]) -> Plan:
    """A region's Plan from the simulator's figures for ``schedule`` (the source of truth)."""
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


def no_schedule_error(strategy: str, budget_bytes: int,
                      row: planning.PlanRow) -> InfeasibleBudgetError:
    """The error for a strategy that found no schedule within the budget: what it found."""
    found = (f"its best schedule peaks at {_core.format_bytes(row.peak_bytes)}"
             if row.peak_bytes is not None else "it found no schedule")
    return InfeasibleBudgetError(
        f"strategy {strategy} found no schedule within the activation budget "
        f"{_core.format_bytes(budget_bytes)}: {found}"
        + (f" ({row.solver_status}; {row.note})" if row.solver_status else "")
        + "; try a larger budget, a longer time_limit_s or another strategy")


def time_limit(time_limit_s: Optional[float]) -> float:
    """``time_limit_s`` checked: a number above 0 (None: 60 s)."""
    return check_number("time_limit_s", 60.0 if time_limit_s is None else time_limit_s,
                        low=0, above_low=True)


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
