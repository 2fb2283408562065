"""Planning at a budget, over budgets and over batch sizes: the C++ planning layer as dataclasses.

``plan`` is what ``remat solve`` does for one graph and one budget, ``sweep`` what ``remat sweep``
does over a range of budgets, ``max_batch`` what ``remat maxbatch`` does over batch sizes. The
work happens in C++ (``remat._core``); this module checks arguments and returns small frozen
dataclasses. Sizes are bytes (an int) or size strings (``"16GiB"``, ``"512MB"``, ``"60%"`` of the
no-rematerialization peak for ``budget``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple, Union

from remat import _core, interrupt
from remat.errors import UsageError
from remat.options import check_bool, check_int, check_number, check_seed, check_text

__all__ = ["PlanRow", "PlanReport", "MinBudget", "SweepPoint", "BatchProbe", "BatchSearch",
           "MaxBatchReport", "plan", "sweep", "max_batch", "relative_gap"]

Size = Union[int, str]
Strategies = Union[str, Sequence[str]]

relative_gap = _core.relative_gap


@dataclass(frozen=True)
class PlanRow:
    """One strategy's outcome at one budget. ``status`` is ``fits``, ``over_budget`` or
    ``no_schedule``; ``cost`` is in the graph's cost unit, ``overhead`` is cost over the
    no-remat cost, ``gap`` the relative distance to the report's lower bound (None without
    one). ``schedule`` has been re-simulated by the C++ simulator."""

    strategy: str
    status: str
    solver_status: str
    cost: Optional[float]
    overhead: Optional[float]
    peak_bytes: Optional[int]
    gap: Optional[float]
    solver_lower_bound: Optional[float]
    seconds: float
    parameters: str
    note: str
    schedule: Optional[_core.Schedule]
    stop_reason: str = ""  # optimal: why it ended ("gap target reached", "proven optimal", ...)

    @property
    def fits(self) -> bool:
        return self.status == "fits"

    def __repr__(self) -> str:
        if self.cost is None:
            return f"PlanRow({self.strategy}: no schedule, {self.solver_status or '-'})"
        gap = "-" if self.gap is None else f"{100 * self.gap:.2f}%"
        return (f"PlanRow({self.strategy}: {self.status}, cost {self.cost:.6g} "
                f"({self.overhead:.3f}x), peak {_core.format_bytes(self.peak_bytes)}, gap {gap}, "
                f"{self.seconds:.2f} s)")


@dataclass(frozen=True)
class MinBudget:
    """The smallest budget (``budget="min"``): the least peak of any schedule found
    (``peak_bytes``, with its ``schedule`` and ``cost``), a certified lower bound on the least
    peak of every schedule (``lower_bound_bytes``, from ``bound_source``) and the ``gap``
    between them, (peak - bound) / peak."""

    peak_bytes: int
    lower_bound_bytes: int
    gap: float
    bound_source: str
    found_by: str
    note: str
    seconds: float
    cost: float
    schedule: _core.Schedule


@dataclass(frozen=True)
class PlanReport:
    """``remat solve`` in Python: the budget, the no-remat reference, the minimum-peak bound,
    the best lower bound on cost (``lower_bound``, from ``lower_bound_source``) and one row per
    strategy in the order asked. With ``budget="min"``, ``min_budget`` says what the smallest
    budget is and how far it is proven."""

    budget_bytes: int
    device_bytes: Optional[int]
    fixed_bytes: int
    no_remat_cost: float
    no_remat_peak_bytes: int
    min_peak_bytes: int
    lower_bound: Optional[float]
    lower_bound_source: Optional[str]
    lower_bound_status: Optional[str]
    rows: Tuple[PlanRow, ...]
    min_budget: Optional[MinBudget] = None

    def best(self) -> Optional[PlanRow]:
        """The cheapest fitting row (the first asked among equals), or None."""
        fitting = [r for r in self.rows if r.fits]
        return min(fitting, key=lambda r: r.cost) if fitting else None

    def row(self, strategy: str) -> PlanRow:
        for r in self.rows:
            if r.strategy == strategy:
                return r
        raise KeyError(strategy)

    def save_schedule(self, graph: _core.Graph, path: str,
                      strategy: Optional[str] = None) -> None:
        """Writes ``strategy``'s schedule (default: the best fitting row's) as ``remat solve
        -o`` does: with the budget, the solver's status and the report's lower bound
        (docs/formats.md; ``remat.load_schedule`` reads them back). UsageError when that row
        has no schedule."""
        row = self.best() if strategy is None else self.row(strategy)
        if row is None:
            raise UsageError("no strategy fits the budget: there is no schedule to save")
        if row.schedule is None:
            raise UsageError(f"{row.strategy} found no schedule: there is none to save")
        _core.save_schedule(graph, row.schedule, row.strategy, self.budget_bytes, path,
                            solver_status=row.solver_status, lower_bound_cost=self.lower_bound)


@dataclass(frozen=True)
class SweepPoint:
    """Every strategy at one budget of a sweep, with the best lower bound found there."""

    budget_bytes: int
    lower_bound: Optional[float]
    lower_bound_status: str
    rows: Tuple[PlanRow, ...]


@dataclass(frozen=True)
class BatchProbe:
    """One strategy at one batch: ``outcome`` is feasible, infeasible or undecided."""

    batch: int
    outcome: str
    budget_bytes: int
    fixed_bytes: int
    reason: str
    cost: Optional[float]
    overhead: Optional[float]
    peak_bytes: Optional[int]
    seconds: float


@dataclass(frozen=True)
class BatchSearch:
    """The largest batch one strategy fits; ``certified`` (optimal only) when the next batch is
    proven not to fit; ``ratio`` is over checkpoint-all's largest batch."""

    strategy: str
    max_batch: int
    certified: bool
    limit_reached: bool
    ratio: Optional[float]
    at_max: Optional[BatchProbe]
    next: Optional[BatchProbe]
    probes: Tuple[BatchProbe, ...]
    seconds: float


@dataclass(frozen=True)
class MaxBatchReport:
    reference_batch: int
    cap_ratio: float
    results: Tuple[BatchSearch, ...]

    def result(self, strategy: str) -> BatchSearch:
        for r in self.results:
            if r.strategy == strategy:
                return r
        raise KeyError(strategy)


def _size_text(size: Optional[Size], what: str, percent: bool = True) -> str:
    if size is None:
        return ""
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise UsageError(f"{what} must be bytes (an int) or a size string such as '16GiB'"
                         f"{' or 60%' if percent else ''}, got {size!r}")
    if isinstance(size, int):
        if size < 0:
            raise UsageError(f"{what} must be >= 0 bytes, got {size}")
        return str(size)
    _core._check_size(size, f"{what}=", percent)  # the command line's own parser and message
    return size


def _strategies(strategies: Strategies) -> list[str]:
    if isinstance(strategies, str):
        return strategies.split(",")
    if not isinstance(strategies, (list, tuple)):
        raise UsageError("strategies must be \"all\", a strategy's name or a list of them, got "
                         f"{strategies!r} ({type(strategies).__name__})")
    return [check_text("strategies[]", s) for s in strategies]


def _limit(time_limit_s: float, what: str = "time_limit_s") -> float:
    return check_number(what, time_limit_s, low=0, above_low=True)


def _settings(threads: int, seed: int, lower_bound: Optional[bool] = None) -> None:
    """Checks the options that every planning function shares (the C++ layer checks the
    threads' range)."""
    check_int("threads", threads)
    check_seed(seed)
    if lower_bound is not None:
        check_bool("lower_bound", lower_bound)


def _row(row: _core.StrategyRow, no_remat_cost: float, gap: Optional[float]) -> PlanRow:
    found = row.found
    status = "fits" if row.fits else ("over_budget" if found else "no_schedule")
    return PlanRow(
        strategy=row.strategy, status=status, solver_status=row.solver_status,
        cost=row.cost if found else None,
        overhead=row.cost / no_remat_cost if found and no_remat_cost > 0 else None,
        peak_bytes=row.peak_bytes if found else None, gap=gap,
        solver_lower_bound=row.own_bound, seconds=row.seconds,
        parameters=row.parameters, note=row.note, schedule=row.schedule,
        stop_reason=row.stop_reason)


def _gap(row: _core.StrategyRow, bound: Optional[float]) -> Optional[float]:
    if bound is None or not row.fits:
        return None
    gap = _core.relative_gap(row.cost, bound)
    return None if math.isnan(gap) else gap


def plan(graph: _core.Graph, *, budget: Optional[Size] = None, memory: Optional[Size] = None,
         fixed_bytes: Optional[int] = None, strategies: Strategies = "all",
         time_limit_s: float = 60.0, threads: int = 1, seed: int = 1,
         lower_bound: bool = True, gap: float = 1e-3,
         patience_s: Optional[float] = None,
         starts: Sequence[tuple[str, _core.Schedule]] = ()) -> PlanReport:
    """Plans ``graph`` at one budget with each strategy, as ``remat solve`` does.

    Exactly one of ``budget`` (the activation budget: bytes, ``"512MiB"`` or ``"60%"`` of the
    no-remat peak) or ``memory`` (device memory; the budget is what ``fixed_bytes`` leaves) gives
    the size. ``strategies`` is ``"all"``, a name or a list of ``remat.strategy_names()``.
    ``time_limit_s`` bounds the whole call: the lower bound (at most half of it) and every
    strategy together; a strategy reached after it is spent is skipped (status
    ``no_schedule``, solver status ``skipped``). ``budget="min"`` first searches the smallest
    budget (at most half the time) and plans at it (``min_budget``). ``gap`` is optimal's gap
    target and ``patience_s`` how long it goes on without improving (None: automatic), as
    ``--gap`` and ``--patience``. ``starts`` lists known schedules of the graph (name,
    schedule): the best one within the budget is a start for local-search and optimal, and
    optimal answers nothing costlier. Raises UsageError or InputError.
    """
    if fixed_bytes is not None:
        check_int("fixed_bytes", fixed_bytes, low=0)
    check_number("gap", gap, low=0, high=1)
    _settings(threads, seed, lower_bound)
    patience = 0.0 if patience_s is None else _limit(patience_s, "patience_s")
    budget_text = "min" if budget == "min" else _size_text(budget, "budget")
    with interrupt.planning():
        report = _core._plan(graph, budget_text, _size_text(memory, "memory"),
                             fixed_bytes, _strategies(strategies), _limit(time_limit_s),
                             threads, seed, lower_bound, float(gap), patience, list(starts))
    smallest = report.min_budget
    bound = report.bound
    proven = report.lower_bound
    return PlanReport(
        budget_bytes=report.budget.activation_bytes, device_bytes=report.budget.device_bytes,
        fixed_bytes=report.budget.fixed_bytes, no_remat_cost=report.no_remat_cost,
        no_remat_peak_bytes=report.no_remat_peak_bytes, min_peak_bytes=report.min_peak_bytes,
        lower_bound=proven, lower_bound_source=bound.source if proven is not None else None,
        lower_bound_status=bound.status if bound is not None else None,
        rows=tuple(_row(r, report.no_remat_cost, report.gap(r)) for r in report.rows),
        min_budget=None if smallest is None else MinBudget(
            peak_bytes=smallest.peak_bytes, lower_bound_bytes=smallest.lower_bound_bytes,
            gap=smallest.gap, bound_source=smallest.bound_source, found_by=smallest.found_by,
            note=smallest.note, seconds=smallest.seconds, cost=smallest.cost,
            schedule=smallest.schedule))


def sweep(graph: _core.Graph, *, budgets: Optional[Sequence[Size]] = None,
          from_: Optional[Size] = None, to: Optional[Size] = None, points: int = 10,
          strategies: Strategies = "all", time_limit_s: float = 60.0, threads: int = 1,
          seed: int = 1, lower_bound: bool = True,
          total_time_limit_s: Optional[float] = None) -> list[SweepPoint]:
    """Every strategy at each budget, as ``remat sweep`` does: ``budgets`` (bytes), or
    ``points`` budgets from ``from_`` (default the minimum-peak bound) to ``to`` (default the
    no-remat peak), both ends sizes or percentages of the no-remat peak."""
    check_int("points", points, low=1)
    _settings(threads, seed, lower_bound)
    grid: list[int] = []
    if budgets is not None:
        no_remat_peak = _core.run_strategy("checkpoint-all", graph, 0).peak_bytes
        grid = [_core.resolve_size(_size_text(b, "budgets"), no_remat_peak) for b in budgets]
        if not grid:
            raise UsageError("budgets lists no budget")
    total = 0.0 if total_time_limit_s is None else _limit(total_time_limit_s, "total_time_limit_s")
    with interrupt.planning():
        points_out = _core._sweep(graph, grid, _size_text(from_, "from_"), _size_text(to, "to"),
                                  points, _strategies(strategies), _limit(time_limit_s),
                                  threads, seed, lower_bound, total)
    no_remat_cost = graph.total_cost
    return [SweepPoint(budget_bytes=p.budget_bytes, lower_bound=p.lower_bound,
                       lower_bound_status=p.lower_bound_status,
                       rows=tuple(_row(r, no_remat_cost, _gap(r, p.lower_bound)) for r in p.rows))
            for p in points_out]


def _probe(p) -> Optional[BatchProbe]:
    if p is None:
        return None
    return BatchProbe(batch=p.batch, outcome=p.outcome, budget_bytes=p.budget_bytes,
                      fixed_bytes=p.fixed_bytes, reason=p.reason, cost=p.cost,
                      overhead=p.overhead, peak_bytes=p.peak_bytes, seconds=p.seconds)


def max_batch(build_graph: Callable[[int], tuple], *, memory: Size,
              strategies: Strategies = "all", max_overhead: Optional[float] = None,
              max_batch: int = 65536, time_limit_s: float = 60.0, threads: int = 1,
              seed: int = 1, total_time_limit_s: Optional[float] = None) -> MaxBatchReport:
    """Per strategy, the largest batch whose step fits ``memory`` (device memory, not a
    percentage) within a cost cap, as ``remat maxbatch`` does. ``build_graph(batch)`` returns
    ``(graph, fixed_bytes)`` or ``(graph, fixed_bytes, input_bytes)``, e.g.
    ``lambda b: remat.zoo_model("vgg16", batch=b)``. ``max_overhead`` caps the cost as a
    multiple of the no-remat cost (default: one extra forward pass, the paper's cap)."""
    if not callable(build_graph):
        raise UsageError("build_graph must be a callable batch -> (graph, fixed_bytes)")
    memory_bytes = _core.resolve_size(_size_text(memory, "memory", percent=False), 0)
    if max_overhead is not None:
        # 1 is the no-rematerialization cost; infinity puts no cap on the cost.
        check_number("max_overhead", max_overhead, low=1, finite=False)
    check_int("max_batch", max_batch, low=1)
    _settings(threads, seed)
    total = 0.0 if total_time_limit_s is None else _limit(total_time_limit_s, "total_time_limit_s")
    with interrupt.planning():
        report = _core._max_batch(build_graph, memory_bytes, _strategies(strategies),
                                  0.0 if max_overhead is None else float(max_overhead),
                                  max_batch, _limit(time_limit_s), threads, seed, total)
    results = tuple(
        BatchSearch(strategy=s.strategy, max_batch=s.max_batch, certified=s.certified,
                    limit_reached=s.limit_reached, ratio=report.ratio(s),
                    at_max=_probe(s.at_max), next=_probe(s.next),
                    probes=tuple(_probe(p) for p in s.probes), seconds=s.seconds)
        for s in report.results)
    return MaxBatchReport(reference_batch=report.reference_batch, cap_ratio=report.cap_ratio,
                          results=results)
