"""A partitioner for AOTAutograd that follows a remat schedule.

AOTAutograd traces a region's forward and backward into one joint graph and asks a partitioner
for two graphs: the forward, which returns the region's outputs and the values saved for
backward, and the backward, which reads those values and the tangents. remat plans the joint
graph (joint.py) at the budget and writes its schedule out as operations in order:

- each computation of a node is one operation, so a recomputation is a copy of the node,
  placed where the schedule recomputes it, reading the copies live at that point;
- views are derived again from the live copy of their base wherever they are read;
- what the schedule computes before the loss node goes to the forward graph, the rest to the
  backward graph, and the forward values that the backward reads are the saved values.

A value is released after its last reader in the generated code, which is where the schedule
frees it or earlier. torch's own ``_extract_fwd_bwd_modules`` then builds the two graphs with
AOTAutograd's conventions: every node is tagged with the graph it must be in, so nothing moves
across, and nothing is merged, since the copies are separate nodes after common-subexpression
elimination has run on the joint graph.
"""

from __future__ import annotations

import itertools
import operator
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import torch
from torch import fx

from remat import _core, interrupt
from remat.errors import InfeasibleBudgetError, InternalError, UsageError
from remat.torch.inductor_peak import mark_region
from remat.torch.joint import JointGraph, _is_primal, read_joint_graph
from remat.torch.product_sums import accumulate_in_place, fold_product_sums
from remat.torch.reference import draws_randomness
from remat.torch.stage_fusion import MEMORY, StageMemory, tag

__all__ = ["schedule_modules", "RematPartition"]

_FORWARD, _BACKWARD = "must_be_in_forward", "must_be_in_backward"


def schedule_modules(joint: JointGraph, operations: Sequence[tuple[str, int, int]],
                     num_fwd_outputs: int,
                     static_lifetime_input_indices: Optional[Sequence[int]] = None
                     ) -> tuple[fx.GraphModule, fx.GraphModule]:
    """The forward and backward graphs of the schedule whose operations
    (``remat.build_plan``) are given, in AOTAutograd's conventions."""
    from torch._functorch.partitioners import _extract_fwd_bwd_modules
    from torch.utils._ordered_set import OrderedSet

    source = joint.module.graph
    graph = fx.Graph()
    fixed: dict[fx.Node, fx.Node] = {}
    for node in source.nodes:
        if node.op in ("placeholder", "get_attr"):
            fixed[node] = graph.node_copy(node)
    live: dict[int, fx.Node] = {}
    generation = [0] * len(joint)
    derived: dict[tuple, fx.Node] = {}
    emitted = {_FORWARD: set(), _BACKWARD: set()}
    phase = _FORWARD

    current: dict[fx.Node, fx.Node] = {}  # the copies of a fused node's operations so far

    def value(node: fx.Node) -> fx.Node:
        if node in fixed:
            return fixed[node]
        if node in current:
            return current[node]
        base = joint.base_of[node]
        if base is not None and joint.order[base] is node:
            if base not in live:
                raise InternalError(f"the schedule reads '{node.name}' while it is not live")
            return live[base]
        own = base is not None and base != joint.loss
        if own and base not in live:
            raise InternalError(f"the schedule reads '{node.name}', a view of "
                                f"'{joint.order[base].name}', while that is not live")
        key = (node, phase, generation[base] if own else 0)
        if key not in derived:
            derived[key] = emit(node)
        return derived[key]

    def emit(node: fx.Node, stage: Optional[tuple[int, bool]] = None) -> fx.Node:
        """A copy of ``node`` in the current graph; ``stage``, for an operation of a
        computation, is the computation's (stage, whether a recomputation)."""
        copy = graph.node_copy(node, value)
        copy.meta["partitioner_tag"] = phase
        if stage is not None:
            tag(copy, *stage)
        emitted[phase].add(copy)
        return copy

    rng_states: dict[int, fx.Node] = {}

    def emit_random(v: int, stage: tuple[int, bool]) -> fx.Node:
        """A random operation: its first run saves the generator's state, and a
        recomputation runs with that state, so it draws the same numbers (dropout's mask)."""
        from torch._prims.rng_prims import run_and_save_rng_state, run_with_rng_state

        node = joint.order[v]
        args = fx.node.map_arg(node.args, value)
        kwargs = fx.node.map_arg(node.kwargs, value)
        if v not in rng_states:
            pair = graph.call_function(run_and_save_rng_state, (node.target, *args), kwargs)
            state_val = _rng_state_value(node)
            pair.meta["val"] = (state_val, node.meta.get("val"))
            state = graph.call_function(operator.getitem, (pair, 0))
            state.meta["val"] = state_val
            out = graph.call_function(operator.getitem, (pair, 1))
            rng_states[v] = state
            made = [pair, state, out]
        else:
            out = graph.call_function(run_with_rng_state,
                                      (rng_states[v], node.target, *args), kwargs)
            made = [out]
        out.meta.update(node.meta)
        for n in made:
            n.meta["partitioner_tag"] = phase
            tag(n, *stage)
            emitted[phase].add(n)
        return out

    def emit_group(v: int, stage: tuple[int, bool]) -> fx.Node:
        """A fused node's operations, in order (fusion.py): one kernel under Inductor."""
        try:
            for node in joint.fused[v]:
                current[node] = emit(node, stage)
            return current[joint.order[v]]
        finally:
            current.clear()

    effects: dict[int, list[int]] = {}
    for i, out in enumerate(joint.backward_outputs):
        if isinstance(out, fx.Node) and joint.base_of.get(out) is not None:
            effects.setdefault(joint.base_of[out], []).append(i)
    forward_values: Optional[list[Any]] = None
    backward_values: dict[int, Any] = {}
    for kind, stage, v in operations:
        interrupt.check()
        if kind == "free":
            live.pop(v, None)
            continue
        if kind != "compute":
            continue
        if v == joint.loss:
            # The loss node stands for the world outside the region: its first computation
            # ends the forward graph. A schedule may free the tangents and compute it again,
            # which only reads the tangents again (placeholders of the backward graph).
            if forward_values is None:
                forward_values = [value(o) if isinstance(o, fx.Node) else o
                                  for o in joint.forward_outputs]
                phase = _BACKWARD
            continue
        if v in joint.kernel_ends:  # the end of a kernel its outputs' operations make
            continue
        if generation[v] > 0 and v in joint.once:
            raise InternalError(f"the schedule recomputes '{joint.order[v].name}', which must "
                                "run once")
        if joint.order[v].op == "placeholder":  # a tangent: an input of the backward graph
            live[v] = fixed[joint.order[v]]
            generation[v] += 1
            continue
        # Inductor fuses a recomputation only within its stage (stage_fusion.py).
        mark = (stage, generation[v] > 0)
        if v in joint.fused:
            live[v] = emit_group(v, mark)
        else:
            live[v] = emit_random(v, mark) if v in joint.random else emit(joint.order[v], mark)
        generation[v] += 1
        if generation[v] == 1:
            for i in effects.get(v, ()):
                backward_values[i] = value(joint.backward_outputs[i])
    if forward_values is None:
        raise InternalError("the schedule never computes the loss node")
    outputs = list(forward_values)
    for i, out in enumerate(joint.backward_outputs):
        if i in backward_values:
            outputs.append(backward_values[i])
        else:  # None, or what derives from placeholders alone (a tangent passed through)
            outputs.append(value(out) if isinstance(out, fx.Node) else out)
    source_output = source.find_nodes(op="output")[0]
    result = graph.output(tuple(outputs))
    result.meta.update(source_output.meta)
    _take_members_in_forward(graph, emitted)
    _copy_mutated_inputs_for_backward(graph, emitted, source_output)

    outputs = list(result.args[0])
    read_in_backward = set(o for o in outputs[num_fwd_outputs:] if isinstance(o, fx.Node))
    for node in emitted[_BACKWARD]:
        read_in_backward.update(node.all_input_nodes)
    saved = [n for n in graph.nodes if n in read_in_backward and
             (n in emitted[_FORWARD] or _is_primal(n))]
    primals = [n for n in graph.nodes if _is_primal(n)]
    static = OrderedSet(p for i, p in enumerate(primals)
                        if i in set(static_lifetime_input_indices or ()))
    module = fx.GraphModule(joint.module, graph)
    return _extract_fwd_bwd_modules(module, saved, saved_sym_nodes=[],
                                    num_fwd_outputs=num_fwd_outputs,
                                    static_lifetime_input_nodes=static)


def _rng_state_value(node: fx.Node) -> torch.Tensor:
    """A fake tensor like the generator state that ``run_and_save_rng_state`` returns for the
    device of ``node``'s output."""
    from torch._guards import detect_fake_mode

    val = node.meta.get("val")
    values = list(val) if isinstance(val, (tuple, list)) else [val]
    fake_mode = detect_fake_mode([v for v in values if isinstance(v, torch.Tensor)])
    device = next(v.device for v in values if isinstance(v, torch.Tensor))
    state = torch.cuda.get_rng_state(device) if device.type == "cuda" else torch.get_rng_state()
    return fake_mode.from_tensor(state) if fake_mode is not None else state


def _take_members_in_forward(graph: fx.Graph, emitted: dict[str, set]) -> None:
    """A multi-output operation computed in forward whose members backward reads: the members
    are taken in forward and saved, since AOTAutograd saves tensors, not tuples."""
    for node in list(graph.nodes):
        if node not in emitted[_FORWARD] or not isinstance(node.meta.get("val"), (tuple, list)):
            continue
        members: dict[Any, fx.Node] = {}
        for user in list(node.users):
            if user not in emitted[_BACKWARD] or user.target is not operator.getitem:
                continue
            index = user.args[1]
            if index not in members:
                with graph.inserting_after(node):
                    member = graph.call_function(operator.getitem, (node, index))
                member.meta.update(user.meta)
                member.meta["partitioner_tag"] = _FORWARD
                emitted[_FORWARD].add(member)
                members[index] = member
            user.replace_all_uses_with(members[index])
            graph.erase_node(user)
            emitted[_BACKWARD].discard(user)


def _copy_mutated_inputs_for_backward(graph: fx.Graph, emitted: dict[str, set],
                                      source_output: fx.Node) -> None:
    """An input that the region updates in place (a batch-norm running statistic), read by a
    recomputation in backward: AOTAutograd writes the update after forward and refuses to save
    an input that changed since, so backward reads a copy made at the start of forward, as the
    first computation read it. These copies are the size of the statistics, outside the plan."""
    descs = source_output.meta.get("desc") or []
    mutated = [d.mutated_input for d in descs if type(d).__name__ == "InputMutationAOTOutput"]
    placeholders = graph.find_nodes(op="placeholder")
    for p in placeholders:
        if p.meta.get("desc") not in mutated:
            continue
        readers = [u for u in p.users if u in emitted[_BACKWARD]]
        if not readers:
            continue
        with graph.inserting_after(placeholders[-1]):
            copy = graph.call_function(torch.ops.aten.clone.default, (p,))
        copy.meta["val"] = p.meta.get("val")
        copy.meta["partitioner_tag"] = _FORWARD
        emitted[_FORWARD].add(copy)
        for reader in readers:
            reader.replace_input_with(p, copy)


# Plan statuses that remat's Python layer gives, not a solver: a schedule file records none.
_NOT_SOLVER_VERDICTS = ("heuristic", "reference", "least-peak", "loaded")


@dataclass
class RegionPlan:
    """What remat planned for one compiled region: the schedule's figures, re-simulated."""

    plan: Any                       # remat.torch.Plan
    graph: _core.Graph              # the region's remat graph, with its true costs
    schedule: _core.Schedule
    forward_nodes: int
    saved_values: int = 0
    seconds: float = 0.0            # planning: remat's graph, the bound and the strategy
    workspace_bytes: int = 0        # the largest kernel workspace of a node (workspace.py)
    note: str = ""                  # why the schedule is not within the budget; "" when it is
    reference: str = ""             # what budget percentages are of (reference.py)
    reference_peak_bytes: int = 0   # its predicted peak
    kept_bytes: int = 0             # held from the end of forward into backward (outputs aside)
    output_bytes: int = 0           # the outputs handed to the caller: what it computes from
                                    # them (a loss outside the compiled module) is not planned
    # torch's own partitions offered to the planner, in remat's model: (name, peak, cost)
    torch_partitions: tuple = ()
    tightened: str = ""             # why the plan's budget is below the asked one, or ""
    # Under Inductor, its own estimate of each compiled graph's peak ("forward", "backward"),
    # recorded as each compiles (both at the region's first call; inductor_peak.py).
    inductor_peak_bytes: dict = field(default_factory=dict)
    # The backend's attempts at the region, the kept one among them: (budget, predicted peak,
    # Inductor's estimate, cost) each; more than one when it was planned again below the budget.
    attempts: tuple = ()
    # How many chunks its split chains run in (split.py): 1 where the region runs whole.
    chunks: int = 1
    # Where the region was planned again in chunks (backend.py): (chunks, predicted peak,
    # cost) of each attempt, the whole region's (1 chunk) first.
    split_attempts: tuple = ()
    # How many weight gradients' sums remat's graph counts as added in place (joint.py).
    in_place_sums: int = 0
    # The strategy's plan within the budget recomputed a node that must run once (region.py).
    refused_once: bool = False

    @property
    def asked_budget_bytes(self) -> int:
        """The budget the region was asked to meet: its first attempt's, where the backend
        planned it again below that (``attempts``), else its plan's."""
        return self.attempts[0][0] if self.attempts else self.plan.budget_bytes

    @property
    def within_budget(self) -> bool:
        """The predicted peak is within the budget asked (a plan made again below it may peak
        above its own lower budget and still meet the asked one)."""
        return self.plan.predicted_peak_bytes <= self.asked_budget_bytes

    @property
    def inductor_peak(self) -> Optional[int]:
        """The larger of Inductor's estimates of the region's forward and backward peaks, once
        both are compiled; None before (or with ``compiler="aot_eager"``)."""
        peaks = self.inductor_peak_bytes
        return max(peaks.values()) if {"forward", "backward"} <= peaks.keys() else None

    def save_schedule(self, path: str) -> None:
        """Writes the region's schedule file (docs/formats.md), with its graph, strategy and
        budget: ``backend(schedule=path)`` or ``wrap(schedule=path)`` then runs it without
        planning, for the same graph (e.g. traced on the meta device, run on the GPU)."""
        status = self.plan.status
        # A least-peak schedule over its budget records none: a file's budget is one its
        # schedule keeps, and loading refuses a file whose schedule peaks over it.
        budget = self.asked_budget_bytes if self.within_budget else None
        _core.save_schedule(self.graph, self.schedule, self.plan.strategy, budget, path,
                            solver_status="" if status in _NOT_SOLVER_VERDICTS else status,
                            lower_bound_cost=self.plan.lower_bound)


@dataclass
class RematPartition:
    """A partition function for AOTAutograd (``partition_fn=``): plans each joint graph with
    ``plan_region`` and emits its schedule. ``plans`` lists what was planned, region by region.
    """

    # (joint graph, torch's own partitions (reference.TorchPartitions) or None, bytes the step's other
    # regions hold) -> region.RegionSchedule
    plan_region: Callable[[JointGraph, Optional[Callable[[], set[int]]], int], Any]
    plans: list[RegionPlan] = field(default_factory=list)
    # Percentages are of plain torch.compile's min-cut partition (Inductor), not of eager
    # autograd's no-rematerialization schedule.
    min_cut_reference: bool = False
    # The step's regions share memory=: per region (keyed by its parameters, so that a region
    # planned again for a new input shape replaces its entry), its fixed bytes and the bytes
    # it keeps from its forward into its backward, which later regions count as fixed.
    ledger: dict = field(default_factory=dict)
    region_key: Any = None          # the key of the region being compiled (set by the backend)
    # Plan the graph Inductor runs: fusible chains as one node each (fusion.py).
    fusion: bool = False
    # Fold sums of matrix products into addmm before planning (product_sums.py): set while
    # the backend compiles a region in chunks (split.py).
    fold_sums: bool = False
    # With ``fold_sums``, remat's graph counts the weight gradients' sums as added in place
    # (joint.py); False: as sums of their own (the graphs still add them in place where they
    # can), which a plan may meet a budget with where the count in place needs a product
    # recomputed that must run once (backend.py).
    count_in_place: bool = True
    # Each region's plan by the mark left on its emitted graphs (inductor_peak.py).
    marked: dict = field(default_factory=dict)
    _marks: Any = field(default_factory=itertools.count)

    def _sums_in_place(self, forward: fx.GraphModule, backward: fx.GraphModule) -> int:
        """With the chunks' products summed (``fold_sums``), adds their sums in place in the
        graphs a region runs (product_sums.py); how many."""
        if not self.fold_sums:
            return 0
        return accumulate_in_place(forward) + accumulate_in_place(backward)

    def latest_plan(self, when: str) -> Any:
        """The last region's Plan; UsageError saying ``when`` planning happens if none yet."""
        if not self.plans:
            raise UsageError(f"nothing is planned yet: {when}")
        return self.plans[-1].plan

    def __call__(self, joint_module: fx.GraphModule, joint_inputs: Any, *,
                 num_fwd_outputs: int,
                 static_lifetime_input_indices: Optional[Sequence[int]] = None,
                 **_ignored: Any) -> tuple[fx.GraphModule, fx.GraphModule]:
        from torch._functorch import config as functorch_config
        from torch._functorch.compile_utils import fx_graph_cse
        from torch._functorch.partitioners import default_partition

        if not any(_is_tangent_node(n) for n in joint_module.graph.nodes):
            return default_partition(joint_module, joint_inputs,
                                     num_fwd_outputs=num_fwd_outputs,
                                     static_lifetime_input_indices=static_lifetime_input_indices)
        if functorch_config.cse:
            joint_module.graph = fx_graph_cse(joint_module.graph)
            joint_module.recompile()
        if self.fold_sums:
            fold_product_sums(joint_module)
        started = time.monotonic()
        joint = read_joint_graph(joint_module, num_fwd_outputs,
                                 sums_in_place=self.fold_sums and self.count_in_place)
        partitions = None
        if self.min_cut_reference:
            from remat.torch.reference import TorchPartitions

            partitions = TorchPartitions(joint, joint_inputs, num_fwd_outputs,
                                         static_lifetime_input_indices)
        if self.fusion:
            from remat.torch.fusion import fuse

            # What plain torch.compile saves stays a node: Inductor writes it out of its
            # kernel, and remat can then keep it (a layer norm's statistics) as torch does.
            kept = () if partitions is None else partitions.at(1.0).saved
            try:
                joint = fuse(joint, outputs=kept)
            except ValueError as error:  # torch's groups broke remat's order: plan unfused
                warnings.warn(f"remat: region {len(self.plans)} is planned without Inductor's "
                              f"fusion groups ({error})", stacklevel=2)
            if partitions is not None:
                partitions = partitions.rebased(joint)
        key = self.region_key if self.region_key is not None else len(self.plans)
        held = sum(b for k, b in self.ledger.items() if k != key)
        interrupt.check()
        planned = self.plan_region(joint, partitions, held)
        interrupt.check()
        self.ledger[key] = joint.fixed_bytes + planned.kept_bytes
        plan, graph, schedule = planned.plan, planned.graph, planned.schedule
        seconds = time.monotonic() - started
        chosen = None if partitions is None or planned.torch_budget is None else \
            partitions.at(planned.torch_budget)
        if chosen is not None and not draws_randomness(chosen.backward) and \
                self._sums_in_place(chosen.forward, chosen.backward) >= joint.in_place_sums:
            # The plan is torch's own partition (plain torch.compile's, or the knob's at a
            # fraction): the region runs it as torch would, with the sums remat's graph counts
            # in place added in place. Not where torch's backward draws randomness: the knob
            # may recompute a random operation there, with a fresh draw, and differentiate
            # another dropout mask than the forward applied; remat's own graphs of the same
            # schedule recompute it from the forward's draw.
            forward, backward = chosen.forward, chosen.backward
        else:
            operations = _core.build_plan(graph, schedule)
            try:
                forward, backward = schedule_modules(joint, operations, num_fwd_outputs,
                                                     static_lifetime_input_indices)
            except InternalError:
                raise
            except Exception as error:  # noqa: BLE001: torch rejected remat's graphs: a bug
                raise _report_internal(joint, len(self.plans), error) from error
            # What the plan holds stage by stage: Inductor fuses no forward kernel that would
            # hold more than its peak (stage_fusion.py).
            forward.meta[MEMORY] = backward.meta[MEMORY] = StageMemory.of(graph, schedule,
                                                                          operations)
            if self._sums_in_place(forward, backward) < joint.in_place_sums:
                raise InternalError("the graphs of the schedule add fewer sums in place than "
                                    "remat's graph counts so")
        saved = len(backward.graph.find_nodes(op="placeholder")) - sum(
            1 for n in backward.graph.nodes if _is_tangent_node(n))
        mark = next(self._marks)
        mark_region(mark, forward, backward)
        region = RegionPlan(plan=plan, graph=graph, schedule=schedule, forward_nodes=joint.loss,
                            saved_values=saved, seconds=seconds,
                            workspace_bytes=max(joint.workspace(), default=0),
                            note=planned.note, reference=planned.reference,
                            reference_peak_bytes=planned.reference_peak_bytes,
                            kept_bytes=planned.kept_bytes,
                            torch_partitions=planned.torch_partitions,
                            tightened=planned.tightened, output_bytes=joint.output_bytes(),
                            in_place_sums=joint.in_place_sums,
                            refused_once=planned.refused_once)
        self.marked[mark] = region
        self.plans.append(region)
        return forward, backward


def _report_internal(joint: JointGraph, region: int, error: Exception) -> InternalError:
    """remat's InternalError for graphs that torch rejected, with the region's joint graph
    written to a file for a report."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", prefix=f"remat-region{region}-joint-",
                                     suffix=".py", delete=False) as f:
        f.write(f"# remat: torch rejected the graphs emitted for region {region}: "
                f"{type(error).__name__}: {error}\n")
        f.write(joint.module.print_readable(print_output=False))
    return InternalError(
        f"region {region}: torch rejected the forward and backward graphs remat emitted "
        f"({type(error).__name__}: {error}); this is a bug in remat: please report it with "
        f"the region's joint graph, written to {f.name}")


def _is_tangent_node(node: fx.Node) -> bool:
    return node.op == "placeholder" and str(node.target).startswith("tangents")


def check_runs_once(joint: JointGraph, graph: _core.Graph, schedule: _core.Schedule,
                    strategy: str) -> None:
    """Raises InfeasibleBudgetError when the schedule recomputes a node that must run once."""
    if not joint.once:
        return
    operations = _core.build_plan(graph, schedule)
    counts: dict[int, int] = {}
    for kind, _stage, v in operations:
        if kind == "compute" and v in joint.once:
            counts[v] = counts.get(v, 0) + 1
    again = sorted(v for v, c in counts.items() if c > 1)
    if again:
        names = ", ".join(joint.names()[v] for v in again[:3])
        raise InfeasibleBudgetError(
            f"strategy {strategy} recomputes operations that must run once ({names}: in-place "
            "writes into the region's inputs, random draws that cannot be replayed, the "
            "tangents or the loss node, which the backward graph receives); use another "
            "strategy")
