"""Planning one compiled region: the settings that ``wrap`` and ``backend`` share, and the plan
of a joint graph through the planning layer (``remat.plan``)."""

from __future__ import annotations

import dataclasses
import os
import re
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import torch

from remat import _core, planning
from remat.errors import BudgetWarning, InfeasibleBudgetError, InputError, UsageError
from remat.options import check_bool, check_int, check_number, check_seed, check_strategy
from remat.planning import _size_text
from remat.torch.balance import machine_balance
from remat.torch.costs import check_cost_options, joint_flops
from remat.torch.joint import JointGraph
from remat.torch.partition import check_runs_once
from remat.torch.reference import TorchPartitions, min_cut_schedule
from remat.torch.plans import load_schedule_file, no_schedule_error, simulated_plan, time_limit
from remat.torch.tangents import hold_tangents, least_peak_bound

__all__ = ["RegionSettings", "RegionSchedule", "region_settings", "plan_region",
           "optimizer_state_bytes"]

Size = Union[int, str]

# The clock that time_limit_s is measured on (a test may replace it).
_now = time.monotonic

# Without strict=True, the strategy gets this share of a region's time and the least-peak
# search, needed when the strategy finds nothing within the budget, what remains.
LEAST_PEAK_SHARE_LEFT = 0.7

# torch's knob's partition (a start, and the peak a plan keeps within when it fits) is made
# only while less than this share of a region's time is spent: past it, what is left goes to
# the strategy (a 24-layer GPT-2 spent 6 of its 10 s on torch's two partitions, and its
# strategy found nothing in the rest).
KNOB_SHARE = 0.25

# Where the strategy found nothing within a budget above the least peak, this share of what is
# left goes to the strategy again, started from the least peak found when that fits.
RETRY_SHARE = 0.5


@dataclass(frozen=True)
class RegionSettings:
    budget: str            # the activation budget's size text ("60%", "512MiB"), or ""
    memory: str            # device memory's size text, or ""
    optimizer_bytes: int   # optimizer state, fixed memory beside the region's primals
    strategy: str
    time_limit_s: float
    threads: int
    seed: int
    lower_bound: bool
    gap: float
    unknown_ops: str
    flops_per_byte: Union[float, str]  # a number, or "machine" (balance.py)
    workspace: bool = True  # count kernel workspace (CPU convolutions) in the peak
    strict: bool = False    # raise when a region has no schedule within its budget
    # Saved schedule files (path, loaded document): a region whose graph one of them was made
    # for follows it instead of being planned.
    schedules: tuple = ()
    # The asked budget times this: the backend plans a region again below its budget when
    # Inductor estimates the compiled plan above it (backend.py).
    budget_scale: float = 1.0
    # "auto": a region over its budget is planned again with its splittable chains in chunks
    # (split.py, backend.py); a number k: every region's splittable chains run in k chunks (1:
    # never split). While a region is compiled in k > 1 chunks, k, which names its graph.
    chunks: Union[str, int] = "auto"


def optimizer_state_bytes(optimizer: Any) -> int:
    """Bytes of the state ``optimizer`` keeps for its parameters: what it holds once it has
    stepped (its state tensors), or before its first step what its kind will hold: Adam and
    AdamW two moments per parameter (three with amsgrad), SGD one momentum buffer when momentum
    is set, RMSprop and Adagrad one square average."""
    if optimizer is None:
        return 0
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise UsageError(f"optimizer must be a torch.optim.Optimizer, got "
                         f"{type(optimizer).__name__}")
    total = 0
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p)
            if state:
                total += sum(t.numel() * t.element_size() for t in state.values()
                             if isinstance(t, torch.Tensor) and t.dim() > 0)
                continue
            total += p.numel() * p.element_size() * _state_copies(optimizer, group)
    return total


def _state_copies(optimizer: torch.optim.Optimizer, group: dict) -> int:
    if isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        return 3 if group.get("amsgrad") else 2
    if isinstance(optimizer, torch.optim.SGD):
        return 1 if group.get("momentum", 0) else 0
    if isinstance(optimizer, (torch.optim.RMSprop, torch.optim.Adagrad)):
        return 1 + (1 if group.get("momentum", 0) else 0)
    raise UsageError(f"remat does not know the state of {type(optimizer).__name__} before its "
                     "first step; call optimizer.step() once, or leave optimizer= out and "
                     "count it in memory=")


def region_settings(*, budget: Optional[Size], memory: Optional[Size], optimizer: Any,
                    strategy: str, time_limit_s: float, threads: int, seed: int,
                    lower_bound: bool, gap: float, unknown_ops: str,
                    flops_per_byte: float, workspace: bool = True,
                    strict: bool = False, schedule: Any = None,
                    chunks: Union[str, int] = "auto") -> RegionSettings:
    """Checks every option before anything is traced; loads the schedule files."""
    if (memory is None) == (budget is None):
        raise UsageError("give exactly one of memory= (device memory) or budget= (activation "
                         "budget)")
    if optimizer is not None and memory is None:
        raise UsageError("optimizer= counts the optimizer's state in device memory: give it "
                         "with memory=, not with budget=")
    check_strategy(strategy)
    limit = time_limit(time_limit_s)
    threads = check_int("threads", threads)
    _core._check_settings(limit, threads)
    check_cost_options(flops_per_byte, unknown_ops, machine_ok=True)
    return RegionSettings(budget=_size_text(budget, "budget"),
                          memory=_size_text(memory, "memory", percent=False),
                          optimizer_bytes=optimizer_state_bytes(optimizer), strategy=strategy,
                          time_limit_s=limit, threads=threads, seed=check_seed(seed),
                          lower_bound=check_bool("lower_bound", lower_bound),
                          gap=check_number("gap", gap, low=0, high=1), unknown_ops=unknown_ops,
                          flops_per_byte=(flops_per_byte if flops_per_byte == "machine"
                                          else float(flops_per_byte)),
                          workspace=check_bool("workspace", workspace),
                          strict=check_bool("strict", strict),
                          schedules=_load_schedules(schedule), chunks=_check_chunks(chunks))


def chunks_name(chunks: Union[str, int]) -> str:
    """The name of a region's graph with its splittable chains in ``chunks`` chunks ("" whole): a
    schedule file made for it says so, and loading it splits the region so again."""
    return f"in {chunks} chunks" if isinstance(chunks, int) and chunks > 1 else ""


def chunks_of(name: str) -> int:
    """The chunks that a region graph's ``name`` records (chunks_name), 1 for none."""
    match = re.fullmatch(r"in (\d+) chunks", name)
    return int(match.group(1)) if match else 1


def _check_chunks(chunks: Any) -> Union[str, int]:
    if chunks == "auto":
        return chunks
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise UsageError(f'chunks must be "auto" or a whole number >= 1, got {chunks!r}')
    return chunks


def _load_schedules(schedule: Any) -> tuple:
    """``schedule=``: None, one schedule file's path, or a list of them (one per region)."""
    if schedule is None:
        return ()
    paths = [schedule] if isinstance(schedule, (str, os.PathLike)) else schedule
    if not isinstance(paths, (list, tuple)) or not paths or \
            not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise UsageError("schedule must be a schedule file's path or a list of them, got "
                         f"{schedule!r}")
    return tuple((os.fspath(p), load_schedule_file(os.fspath(p))) for p in paths)


@dataclass(frozen=True)
class RegionSchedule:
    """A region's plan: the Plan (re-simulated on the true costs), the graph with its true
    costs, the schedule, and a note when the schedule is over the budget (empty otherwise)."""

    plan: Any
    graph: _core.Graph
    schedule: _core.Schedule
    note: str = ""
    reference: str = "no rematerialization"  # what percentages are of (reference.py)
    reference_peak_bytes: int = 0
    kept_bytes: int = 0  # activations held from the end of forward into backward (saved, outputs)
    # The plan is torch's own partition at this activation_memory_budget (1: plain
    # torch.compile's), which the region then runs as torch does; None: remat's schedule.
    torch_budget: Optional[float] = None
    # torch's own partitions offered to the planner, in remat's model: (name, peak, cost).
    torch_partitions: tuple = ()
    tightened: str = ""  # why the plan's budget is below the asked one ("" when it is not)
    # The strategy's plan within the budget recomputed a node that must run once, and was
    # refused: the region runs the least peak found instead.
    refused_once: bool = False


def plan_region(settings: RegionSettings, joint: JointGraph,
                partitions: Optional[TorchPartitions] = None,
                held_elsewhere: int = 0) -> RegionSchedule:
    """Plans the joint graph at the settings' budget.

    A percentage is of the reference's peak: plain torch.compile's min-cut partition (from
    ``partitions``, reference.py), or without ``partitions`` the no-rematerialization schedule
    (eager autograd). A budget that holds the min-cut partition's peak gets that partition
    (status "reference"), which the region then runs as plain torch.compile does. Below it,
    torch's own partitions (plain torch.compile's and the knob's at the budget's fraction) are
    offered to the planner as known schedules: when the plan is one of them, the region runs
    it as torch does (``torch_budget``). With ``memory=``, ``held_elsewhere`` bytes (what the step's
    other regions keep while this one runs) are fixed memory too. When no schedule
    within the budget is found (the budget is below the graph's least peak, or the strategy
    found none in time), the region gets the schedule of least peak found
    (``_least_peak_schedule``, status "least-peak"; its Plan has the peak's lower bound and
    gap) and a BudgetWarning says so; with ``strict=True`` an InfeasibleBudgetError is raised
    instead."""
    # torch's partitions made before the call (to fuse around what plain torch.compile saves)
    # count against the region's time limit.
    started = _now() - (partitions.spent_s if partitions is not None else 0.0)
    costs = joint_flops(joint, flops_per_byte=_flops_per_byte(settings, joint),
                        unknown_ops=settings.unknown_ops)
    name = chunks_name(settings.chunks)
    graph = joint.to_graph(costs, "flop", name, workspace=settings.workspace)
    planning_graph = (joint.to_graph(joint.planning_costs(costs), "flop", name,
                                     workspace=settings.workspace)
                      if joint.once else graph)
    fixed = joint.fixed_bytes + settings.optimizer_bytes + (held_elsewhere if settings.memory
                                                            else 0)
    no_remat = _core.run_strategy("checkpoint-all", graph, 0)
    reference_name = "no rematerialization"
    reference = no_remat.schedule
    if partitions is not None:
        reference_name = "torch.compile's min-cut partition"
        reference = min_cut_schedule(graph, joint, partitions.at(1.0).saved)
    reference_sim = _core.simulate(graph, reference)
    no_room: Optional[InfeasibleBudgetError] = None
    if settings.budget.endswith("%"):
        budget_bytes = _core.resolve_size(settings.budget, reference_sim.peak_bytes)
    else:
        try:
            budget_bytes = _core._resolve_budget(graph, settings.budget, settings.memory,
                                                 fixed).activation_bytes
        except InfeasibleBudgetError as error:  # the fixed memory fills the device
            budget_bytes, no_room = 0, error
    budget_bytes = int(budget_bytes * min(1.0, settings.budget_scale))
    minimum, minimum_proof = least_peak_bound(graph)

    def plan_of(schedule, status, bound, budget=budget_bytes, strategy=settings.strategy):
        return simulated_plan(graph, schedule, strategy, status, budget, no_remat.cost,
                              no_remat.peak_bytes, fixed, bound)

    refused: list = []  # the strategy's plans refused for recomputing a once-only node

    def region(plan, schedule, note="", torch_budget=None, torch_partitions=(), tightened=""):
        return RegionSchedule(plan, graph, schedule, note, reference_name,
                              reference_sim.peak_bytes, kept_bytes(graph, schedule, joint),
                              torch_budget, torch_partitions, tightened, bool(refused))

    if settings.schedules:
        return _loaded_region(settings, joint, graph, budget_bytes, no_room, plan_of, region)
    if partitions is not None and reference_sim.peak_bytes <= budget_bytes and \
            _recomputes_once_only(joint, graph, reference, reference_name) is None:
        # The budget holds what plain torch.compile runs: the region runs that.
        return region(plan_of(reference, "reference", None, strategy=reference_name),
                      reference, torch_budget=1.0)

    def strategy_plan(starts: list, plan_budget: int, time_limit_s: float, torch_figures: tuple):
        """The strategy's plan within ``plan_budget`` from ``starts`` ((name, schedule, torch's
        fraction or None)), as (region, None), or (None, why it found none)."""
        report = planning.plan(planning_graph, budget=plan_budget,
                               strategies=[settings.strategy],
                               time_limit_s=max(time_limit_s, 0.1),
                               threads=settings.threads, seed=settings.seed,
                               lower_bound=settings.lower_bound, gap=settings.gap,
                               starts=[(name, s) for name, s, _ in starts])
        row = report.rows[0]
        # Read as the program emitted, which computes the loss node once (tangents.py): that
        # holds nothing more, so it still fits.
        schedule = hold_tangents(graph, row.schedule) if row.fits else None
        if not row.fits:
            return None, no_schedule_error(settings.strategy, plan_budget, row)
        failure = _recomputes_once_only(joint, planning_graph, schedule, settings.strategy)
        if failure is not None:
            refused.append(failure)
            return None, failure
        bound = report.lower_bound
        if bound is not None and joint.once:
            # Over the schedules that run each once-only node once (the only ones that
            # can run), the planning costs are the true costs plus the penalty.
            bound = max(0.0, bound - joint.penalty(costs))
        operations = _core.build_plan(planning_graph, schedule)
        known = next(((name, fraction) for name, s, fraction in starts
                      if fraction is not None and
                      _core.build_plan(planning_graph, s) == operations), None)
        # The bound and the budget are those of the plan's budget: below the asked one, it
        # is torch's partition's peak, and the bound is valid there, not at the asked one.
        plan = plan_of(schedule, row.solver_status or "heuristic", bound, budget=plan_budget,
                       strategy=known[0] if known else settings.strategy)
        tightened = "" if plan_budget == budget_bytes else (
            f"planned within {_core.format_bytes(plan_budget)}, the peak of "
            f"{next(n for n, p, _ in torch_figures if p == plan_budget)} (remat's model), "
            f"below the budget {_core.format_bytes(budget_bytes)}: no plan that torch's own "
            "partition beats in both peak and cost")
        return region(plan, schedule, torch_budget=known[1] if known else None,
                      torch_partitions=torch_figures, tightened=tightened), None

    torch_figures: tuple = ()
    starts: list = []
    # torch's own partitions, which a least-peak schedule never peaks above.
    torch_known = [(reference_name, reference)] if partitions is not None else []
    if no_room is not None:
        failure = no_room
    elif budget_bytes < minimum:
        failure = InfeasibleBudgetError(
            f"the activation budget {_core.format_bytes(budget_bytes)} is below the minimum "
            f"peak {_core.format_bytes(minimum)} that any schedule of this graph needs "
            f"({minimum_proof})"
            + (f"; fixed memory (parameters, gradients, inputs, optimizer state) takes "
               f"{_core.format_bytes(fixed)} of memory={settings.memory}"
               if settings.memory else ""))
    else:
        # Without strict, the least-peak search keeps a share of the time in case the
        # strategy finds nothing.
        share = 1.0 if settings.strict else LEAST_PEAK_SHARE_LEFT
        # The knob's partition is a second min-cut solve (seconds on a deep model): it is a
        # start worth having only while the strategy keeps most of the time.
        knob_fraction = (budget_bytes / max(1, reference_sim.peak_bytes)
                         if _now() - started < KNOB_SHARE * settings.time_limit_s else 1.0)
        starts = _torch_starts(joint, graph, partitions, reference, knob_fraction)
        # Never a plan that torch's own partition beats in both peak and cost: when the
        # knob's partition fits the budget, the plan is made within its peak (and starts from
        # it), so that it holds no more than the knob and costs no more.
        compared = [(name, _core.simulate(graph, s)) for name, s, _ in starts]
        torch_known = [(name, s) for name, s, _ in starts]
        torch_figures = tuple((name, sim.peak_bytes, sim.cost) for name, sim in compared)
        fitting = [sim.peak_bytes for _, sim in compared if sim.peak_bytes <= budget_bytes]
        planned, failure = strategy_plan(
            starts, min([budget_bytes, *fitting]),
            share * (settings.time_limit_s - (_now() - started)), torch_figures)
        if planned is not None:
            return planned
    if settings.strict:
        raise failure
    # Where the budget is above the least peak, the strategy may have found nothing only for
    # want of a start that fits: the least-peak search keeps part of the time for the strategy
    # to start again from the least peak found, where that fits.
    retry = no_room is None and budget_bytes >= minimum
    left_s = settings.time_limit_s - (_now() - started)
    schedule, found_by, searched = _least_peak_schedule(
        settings, joint, planning_graph, joint.penalty(costs),
        left_s * (1.0 - RETRY_SHARE if retry else 1.0), known=torch_known)
    if retry and _core.simulate(graph, schedule).peak_bytes <= budget_bytes:
        planned, _ = strategy_plan([*starts, ("the least peak found", schedule, None)],
                                   budget_bytes, settings.time_limit_s - (_now() - started),
                                   torch_figures)
        if planned is not None:
            return planned
    plan = plan_of(schedule, "least-peak", None, budget=None)
    # Both bounds hold for every program of the region: the smallest-budget search's for every
    # schedule of its graph, and the programs are schedules of it.
    if searched > minimum:
        minimum, minimum_proof = searched, "the smallest-budget search's certified bound"
    plan = dataclasses.replace(plan, budget_bytes=budget_bytes, peak_lower_bound_bytes=minimum,
                               peak_gap=planning.relative_gap(plan.predicted_peak_bytes,
                                                              minimum))
    within = plan.predicted_peak_bytes <= budget_bytes
    # What the least peak is known to be: the found one at the bound is the least possible.
    floor = ("the least possible" if plan.predicted_peak_bytes <= minimum else
             f"no program of this region peaks below {_core.format_bytes(minimum)}")
    note = (f"no {settings.strategy} schedule within the activation budget "
            f"{_core.format_bytes(budget_bytes)} ({failure}); the region runs a least-peak "
            f"schedule, the least peak found ({found_by}), which peaks at "
            f"{_core.format_bytes(plan.predicted_peak_bytes)} ({floor}: {minimum_proof})"
            + ("" if within else " (over the budget); pass strict=True to raise instead"))
    warnings.warn(note, BudgetWarning, stacklevel=2)
    return region(plan, schedule, note, torch_partitions=torch_figures)


def _flops_per_byte(settings: RegionSettings, joint: JointGraph) -> float:
    """The settings' number, or with ``"machine"`` the balance of the device the region runs
    on (balance.py)."""
    if settings.flops_per_byte != "machine":
        return float(settings.flops_per_byte)
    devices = {v.device for n in joint.order if n is not None
               for v in [n.meta.get("val")] if isinstance(v, torch.Tensor)}
    device = next(iter(sorted(devices, key=str)), torch.device("cpu"))
    if device.type == "meta":
        raise UsageError('flops_per_byte="machine" measures the device the region runs on; '
                         "a region traced on the meta device has none: give a number")
    return machine_balance(device)


def _torch_starts(joint: JointGraph, graph: _core.Graph,
                  partitions: Optional[TorchPartitions], min_cut: _core.Schedule,
                  fraction: float) -> list[tuple[str, _core.Schedule, float]]:
    """torch's own partitions as schedules of ``graph`` (name, schedule, the knob's fraction):
    plain torch.compile's and the knob's at ``fraction`` of it, those that run each once-only
    node once."""
    if partitions is None:
        return []
    found = [("torch.compile's min-cut partition", min_cut, 1.0)]
    if fraction < 1:
        knob = min_cut_schedule(graph, joint, partitions.at(fraction).saved)
        found.append((f"torch's activation_memory_budget={fraction:.3g}", knob, fraction))
    return [(name, s, f) for name, s, f in found
            if _recomputes_once_only(joint, graph, s, name) is None]


def _loaded_region(settings: RegionSettings, joint: JointGraph, graph: _core.Graph,
                   budget_bytes: int, no_room: Optional[InfeasibleBudgetError],
                   plan_of: Callable, region: Callable) -> RegionSchedule:
    """The region's plan from the schedule file made for its graph (same fingerprint: costs,
    bytes, kinds and edges), re-simulated here; over the budget it warns (strict: raises)."""
    paths = ", ".join(path for path, _ in settings.schedules)
    matching = [(path, document) for path, document in settings.schedules
                if document.graph.fingerprint == graph.fingerprint]
    if not matching:
        raise InputError(
            f"schedule={paths}: no schedule there was made for this region's graph "
            f"({len(graph)} nodes, fingerprint {graph.fingerprint}; the files' graphs: "
            + ", ".join(f"{len(d.graph)} nodes, {d.graph.fingerprint}"
                        for _, d in settings.schedules)
            + "); a schedule is reused only for the same graph (same model, shapes, dtypes "
            "and compiler=): plan again without schedule=")
    path, document = matching[0]
    # Read as the program it runs: the tangents held until their last reader (tangents.py).
    schedule = hold_tangents(graph, document.schedule)
    failure = _recomputes_once_only(joint, graph, schedule, "the loaded schedule")
    if failure is not None:
        raise InputError(f"{path}: {failure}")
    strategy = document.strategy or "loaded"
    if no_room is None and _core.simulate(graph, schedule).peak_bytes <= budget_bytes:
        return region(plan_of(schedule, "loaded", None, strategy=strategy), schedule)
    plan = plan_of(schedule, "loaded", None, budget=None, strategy=strategy)
    plan = dataclasses.replace(plan, budget_bytes=budget_bytes)
    note = (f"the schedule loaded from {path} peaks at "
            f"{_core.format_bytes(plan.predicted_peak_bytes)}, over the activation budget "
            f"{_core.format_bytes(budget_bytes)}"
            + (f" ({no_room})" if no_room is not None else ""))
    if settings.strict:
        raise InfeasibleBudgetError(note)
    warnings.warn(note + "; pass strict=True to raise instead", BudgetWarning, stacklevel=3)
    return region(plan, schedule, note)


def kept_bytes(graph: _core.Graph, schedule: _core.Schedule, joint: JointGraph) -> int:
    """Bytes live when the loss node (the world outside the region) runs, less its own and
    less the region's outputs (the caller's, or the next region's inputs): what the region
    holds from the end of its forward into its backward for itself."""
    operations = _core.build_plan(graph, schedule)
    live = _core.simulate(graph, schedule).live_bytes_after_op
    outputs = joint.output_bytes()
    for (kind, _stage, v), after in zip(operations, live):
        if kind == "compute" and v == joint.loss:
            return max(0, after - graph.nodes[joint.loss].bytes - outputs)
    return 0


def _recomputes_once_only(joint: JointGraph, graph: _core.Graph, schedule: _core.Schedule,
                          strategy: str) -> Optional[InfeasibleBudgetError]:
    try:
        check_runs_once(joint, graph, schedule, strategy)
    except InfeasibleBudgetError as error:
        return error
    return None


def _held_tangents(graph: _core.Graph, candidate: tuple) -> tuple:
    """(peak, cost, schedule, name) -> the same for the schedule read as the program emitted,
    which computes the loss node once (``hold_tangents``), re-simulated where that changed it."""
    schedule = hold_tangents(graph, candidate[2])
    if schedule is candidate[2]:
        return candidate
    sim = _core.simulate(graph, schedule)
    return (sim.peak_bytes, sim.cost, schedule, candidate[3])


def _least_peak_schedule(settings: RegionSettings, joint: JointGraph, graph: _core.Graph,
                         penalty: float, left: float,
                         known: Sequence[tuple[str, _core.Schedule]] = ()
                         ) -> tuple[_core.Schedule, str, int]:
    """(schedule, what found it, a certified lower bound on every schedule's peak: the
    smallest-budget search's, 0 without one): the schedule of least peak (then least cost)
    among those that run each once-only node once: the smallest-budget search's
    (``remat.plan(budget="min")``), local-search's at the least peak it found, no
    rematerialization's and the ``known`` ones (torch's own partitions: (name, schedule)).
    So it never peaks above what the user had without remat, and a lower budget never runs a
    higher peak than a higher one: below every budget that a schedule meets, the peak is the
    least found. ``graph`` has the planning costs, which add ``penalty`` to every schedule
    that runs each once-only node once."""
    fallback = _core.run_strategy("checkpoint-all", graph, 0)
    candidates = [(fallback.peak_bytes, fallback.cost, fallback.schedule,
                   "no rematerialization")]
    for name, schedule in known:
        sim = _core.simulate(graph, schedule)
        candidates.append((sim.peak_bytes, sim.cost, schedule, name))
    try:
        # local-search then looks for a cheaper schedule at the least peak found (the
        # search's own minimises the peak at any cost).
        report = planning.plan(graph, budget="min", strategies=["local-search"],
                               time_limit_s=max(left, 0.5), threads=settings.threads,
                               seed=settings.seed, lower_bound=False, gap=settings.gap)
    except InfeasibleBudgetError:
        report = None
    smallest = report.min_budget if report is not None else None
    if smallest is not None:
        candidates.append((smallest.peak_bytes, smallest.cost, smallest.schedule,
                           f"{smallest.found_by}, the smallest-budget search"))
    row = report.rows[0] if report is not None else None
    if row is not None and row.fits:
        candidates.append((row.peak_bytes, row.cost, row.schedule,
                           "local-search at the least peak found"))
    found = [c for c in (_held_tangents(graph, c) for c in candidates)
             if _recomputes_once_only(joint, graph, c[2], settings.strategy) is None]
    bound = smallest.lower_bound_bytes if smallest is not None else 0
    if not found:
        return fallback.schedule, "no rematerialization", bound
    _peak, _cost, schedule, found_by = min(found, key=lambda c: (c[0], c[1]))
    true_costs = [(peak, cost - penalty) for peak, cost, _, _ in found]
    return schedule, (f"{found_by}; found: "
                      f"{_front(true_costs, fallback.cost - penalty, graph.cost_unit)}"), bound


def _front(points: list, no_remat_cost: float, unit: str) -> str:
    """The (peak, true cost) points found, each cheaper than every lower one, as text: what the
    choice was made among. Costs as x the no-rematerialization cost, or in ``unit`` when that
    is zero."""
    front: list = []
    for peak, cost in sorted(set(points)):
        if not front or cost < front[-1][1]:
            front.append((peak, cost))
    if no_remat_cost <= 0:
        return ", ".join(f"{_core.format_bytes(p)} at {c:g}" for p, c in front) + f" ({unit})"
    return ", ".join(f"{_core.format_bytes(p)} at {c / no_remat_cost:.2f}x"
                     for p, c in front) + " the no-rematerialization cost"
