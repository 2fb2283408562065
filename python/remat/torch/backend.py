"""A torch.compile backend that plans each compiled region with remat.

    model = torch.compile(model, backend=remat.torch.backend(budget="60%"), dynamic=False)
    loss = loss_fn(model(x), y); loss.backward(); opt.step()

Dynamo captures each region of the model; AOTAutograd traces its joint forward and backward
graph and asks the backend's partitioner for the forward and backward graphs: remat plans the
joint graph at the budget and emits its schedule (partition.py), and the inner compiler
compiles both graphs: Inductor by default (the partitioner replaces Inductor's own, after
Inductor's joint-graph passes), or ``compiler="aot_eager"`` to run them uncompiled. Under
Inductor, its own estimate of the compiled graphs' peak is checked against the budget, and a
region more than 5% over it is planned and compiled again below it (inductor_peak.py). A new
input shape makes torch.compile's guards fail and Dynamo compile the region again, so each
input signature gets its own plan.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, Union

import torch

from remat import _core, interrupt
from remat.errors import BudgetWarning, InfeasibleBudgetError, InputError, UsageError
from remat.options import check_bool, check_choice
from remat.torch.inductor_peak import peak_pass
from remat.torch.model_logging import ignore_model_logging
from remat.torch.partition import RegionPlan, RematPartition
from remat.torch.region import RegionSettings, chunks_of, plan_region, region_settings
from remat.torch.split import chains_of, split_chains
from remat.torch.stage_fusion import stage_barrier

__all__ = ["RematBackend", "backend"]

COMPILERS = ("inductor", "aot_eager")

# How far above the budget Inductor's estimate of a region's compiled graphs may be before the
# region is planned again below it, and (above remat's prediction too) a BudgetWarning says so.
INDUCTOR_SLACK = 0.05
# How many times a region is planned and compiled again below its budget.
RETRIES = 2
# Two estimates this close are the same peak: when a plan made lower is estimated the same as an
# earlier one, the peak is not where remat's schedule moves memory, and no more attempts are made.
SAME_ESTIMATE = 0.005
# Plans not made again below the budget: torch's own partition at 100% (plain torch.compile's),
# the least peak found, and a loaded schedule.
_NOT_RETRIED = ("reference", "least-peak", "loaded")
# A region over its budget with chains to split (split.py: a head and its loss, MLPs) is
# planned again with them in chunks at most this many times, into at most this many chunks.
SPLIT_ATTEMPTS = 8
SPLIT_MOST_CHUNKS = 256
# A doubling of the chunks that lowers the predicted peak by less than this ratio ends them.
SPLIT_PROGRESS = 0.95
# Below every attempt's peak, an attempt this much above the least peak may be kept where it
# is cheaper: Llama's head in 8 chunks peaked 0.2% below 4 chunks at 11-21x the cost.
SPLIT_PEAK_TOLERANCE = 0.05
# Each attempt may plan for what is left of their time limit over this many attempts (or
# fewer where fewer remain): most regions need two or three, and an attempt given an eighth
# of the limit found plans at twice the cost of one given more.
SPLIT_SHARING = 3
# Inductor's score_fusion_memory_threshold for a region in chunks: no horizontal fusion.
UNFUSED = 10 ** 12


def _warn_again(caught: list) -> None:
    """Emits again the warnings recorded while the kept attempt compiled."""
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _boxed_eager(gm: torch.fx.GraphModule, _example_inputs: Any):
    """Runs the graph as generated Python code in AOTAutograd's boxed convention: the argument
    list is cleared once read, so each input is released after its last use, like any value."""
    gm.graph.set_codegen(torch.fx.graph._BoxedCodeGen())
    gm.recompile()

    def run(args: list) -> Any:
        return gm(args)

    run._boxed_call = True  # type: ignore[attr-defined]
    return run


def _interrupted(error: BaseException) -> bool:
    """True when a KeyboardInterrupt is among the causes and contexts of ``error``."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _partitioner_class():
    from torch._inductor.custom_graph_pass import CustomPartitionerFn

    class _InductorPartitioner(CustomPartitionerFn):
        """Inductor's hook for a custom partitioner, calling remat's."""

        def __init__(self, partition: RematPartition):
            self.partition = partition

        def __call__(self, gm, joint_inputs, **kwargs):
            kwargs.pop("compiler", None)
            return self.partition(gm, joint_inputs, **kwargs)

        def uuid(self):
            return None  # no cache: each compilation plans again

        def __deepcopy__(self, memo):
            return self  # Inductor copies its configuration; the plans are shared, not copied

        def __reduce__(self):
            # Inductor pickles its configuration for its cache key; uuid() None already keeps
            # remat's graphs out of that cache, so a name stands for the partitioner there.
            return (str, ("remat.torch.backend partitioner",))

    return _InductorPartitioner


class RematBackend:
    """The backend ``remat.torch.backend`` returns. ``plans`` lists each compiled region's
    plan, ``plan`` the latest one's."""

    def __init__(self, settings: RegionSettings, compiler: str,
                 inductor_config: Optional[dict] = None, fusion: Optional[bool] = None):
        self.settings = settings
        self.compiler = compiler
        self.inductor_config = dict(inductor_config or {})
        self._budget_scale = 1.0  # below 1 while a region is planned again (_compile_checked)
        ignore_model_logging()  # a model and its loss are one region (model_logging.py)
        self._partition = RematPartition(
            lambda joint, saved, held: plan_region(self._settings(), joint, saved, held),
            min_cut_reference=compiler == "inductor",
            fusion=compiler == "inductor" if fusion is None else bool(fusion))

    def _settings(self) -> RegionSettings:
        if self._budget_scale == 1.0:
            return self.settings
        return dataclasses.replace(self.settings, budget_scale=self._budget_scale)

    @property
    def plans(self) -> list[RegionPlan]:
        return list(self._partition.plans)

    @property
    def plan(self):
        return self._partition.latest_plan("the model is compiled at its first call")

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Any:
        try:
            # Ctrl-C stops the region's planning even where Python swallowed it (interrupt.py).
            with interrupt.planning():
                return self._compile(gm, example_inputs)
        except Exception as error:
            # Ctrl-C can land inside torch's tracing, in a `try` whose `finally` then fails on
            # a variable the interrupt left unset: the KeyboardInterrupt survives only as that
            # error's context. It is raised again as itself, so that Ctrl-C stays Ctrl-C.
            if _interrupted(error):
                raise KeyboardInterrupt from None
            raise

    def _compile(self, gm: torch.fx.GraphModule, example_inputs: list) -> Any:
        """Compiles the region as it is; where its plan is over the budget and it has loss
        chains to split (split.py), compiles it again with them in chunks (_split_region)."""
        chains = chains_of(gm)
        chunks = self.settings.chunks
        if not chains or chunks == 1:
            return self._compile_region(gm, example_inputs)
        if chunks != "auto":
            return self._compile_chunks(gm, example_inputs, chunks)
        if self.settings.schedules:
            return self._compile_loaded(gm, example_inputs)
        # With strict=True, the region is refused only once no chunks meet its budget.
        settings, count = self.settings, len(self._partition.plans)
        self.settings = dataclasses.replace(settings, strict=False)
        try:
            with warnings.catch_warnings(record=True) as whole:
                warnings.simplefilter("always")
                compiled = self._compile_region(gm, example_inputs)
            with warnings.catch_warnings(record=True) as kept:  # the kept attempt's
                warnings.simplefilter("always")
                compiled = self._split_region(gm, example_inputs, chains, (compiled, whole),
                                              count)
        finally:
            self.settings = settings
        plans = self._partition.plans
        if settings.strict and len(plans) > count and not plans[-1].within_budget:
            planned = plans.pop()
            tried = max((a[0] for a in planned.split_attempts), default=1)
            bound = planned.plan.peak_lower_bound_bytes
            raise InfeasibleBudgetError(
                f"no {settings.strategy} schedule within the activation budget "
                f"{_core.format_bytes(planned.asked_budget_bytes)}, with the region whole or "
                f"its chains in up to {tried} chunks of tokens: the least peak found is "
                f"{_core.format_bytes(planned.plan.predicted_peak_bytes)}"
                + (f" (no program of it in {planned.chunks} chunk(s) peaks below "
                   f"{_core.format_bytes(bound)})" if bound is not None else ""))
        _warn_again(kept)
        return compiled

    @contextmanager
    def _in_chunks(self, chunks: int, count_in_place: bool = True,
                   **settings: Any) -> Iterator[None]:
        """While a region compiles with its chains in ``chunks`` chunks: its graph says so
        (region.chunks_name), the chunks' weight gradients are summed by addmm
        (product_sums.py) and counted as added in place unless ``count_in_place`` is False
        (partition.py), and Inductor does not fuse kernels horizontally, which would run
        the chunks together and hold every chunk's output at once (unless the user set the
        threshold)."""
        saved = self.settings, self.inductor_config
        self.settings = dataclasses.replace(self.settings, chunks=chunks, **settings)
        self.inductor_config = {"score_fusion_memory_threshold": UNFUSED,
                                **self.inductor_config}
        self._partition.fold_sums = True
        self._partition.count_in_place = count_in_place
        try:
            yield
        finally:
            self.settings, self.inductor_config = saved
            self._partition.fold_sums = False
            self._partition.count_in_place = True

    def _compile_chunks(self, gm: torch.fx.GraphModule, example_inputs: list,
                        chunks: int, count_in_place: bool = True, **settings: Any) -> Any:
        """Compiles the region with its chains in ``chunks`` chunks (split.py)."""
        count = len(self._partition.plans)
        with self._in_chunks(chunks, count_in_place, **settings):
            compiled = self._compile_region(split_chains(gm, chunks), example_inputs)
        if len(self._partition.plans) > count:
            self._partition.plans[-1].chunks = chunks
        return compiled

    def _compile_loaded(self, gm: torch.fx.GraphModule, example_inputs: list) -> Any:
        """With schedule files: the region whole, or else in the chunks that a file's graph
        records (region.chunks_of), loading the file made for it."""
        recorded = sorted({chunks_of(document.graph.name)
                           for _, document in self.settings.schedules} - {1})
        try:
            return self._compile_region(gm, example_inputs)
        except InputError as error:
            if not recorded:
                raise
            failure = error
        for chunks in recorded:
            try:
                return self._compile_chunks(gm, example_inputs, chunks)
            except InputError:
                continue
        raise failure

    def _split_region(self, gm: torch.fx.GraphModule, example_inputs: list, chains: list,
                      whole: tuple, count: int) -> Any:
        """Where the whole region's plan (planned after the first ``count`` regions' plans) is over
        its budget, plans and compiles it with its chains in chunks, at the whole region's budget
        in bytes: 2 chunks, then twice as many while over the budget and the peak still falls
        (below SPLIT_PROGRESS of the attempts before: more chunks add nodes, and their sums
        hold more), at most SPLIT_ATTEMPTS times (their planning sharing one more time_limit_s,
        each given what is left over SPLIT_SHARING) and SPLIT_MOST_CHUNKS chunks. Where a plan
        with the weight gradients' sums counted in place is over the budget, was refused for
        recomputing a node that must run once or lowered the peak too little, the same chunks
        are planned again with them counted out of place (one more of the SPLIT_ATTEMPTS).
        Keeps the cheapest attempt within the budget, or else the cheapest within
        SPLIT_PEAK_TOLERANCE of the least predicted peak, the whole region's among them
        (_keep_split). A lower budget tries the chunk counts a higher one tried, and more.
        """
        partition = self._partition
        compiled, caught = whole
        if len(partition.plans) == count or partition.plans[-1].within_budget:
            _warn_again(caught)
            return compiled
        first = partition.plans[-1]
        attempts = [(compiled, first, caught, dict(partition.ledger), 1)]
        budget_bytes = first.asked_budget_bytes
        rows = min(chain.rows for chain in chains)
        chunks = 2
        settings = self.settings
        # The chunked region's budget is the whole one's, in bytes: a percentage of the
        # chunked graph's own peak would be of another, lower, reference. The attempts'
        # planning shares one more time limit.
        left_s = settings.time_limit_s
        attempt = 0
        while attempt < SPLIT_ATTEMPTS:
            chunks = min(chunks, SPLIT_MOST_CHUNKS, rows)
            if chunks <= attempts[-1][4] or left_s <= 0:
                break
            before = min(a[1].plan.predicted_peak_bytes for a in attempts)
            # Sums counted in place first: each chunk's product is then added where the order
            # puts it, and the sum held from the first chunk's on. Where that plan is over the
            # budget and either the strategy's plan within it recomputed a node that must run
            # once or the chunks lowered the peak too little, the same chunks again with the
            # sums counted as sums of their own: a plan may then compute each product late,
            # holding the chunks' inputs of it rather than the sum.
            for count_in_place in (True, False):
                count = len(partition.plans)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    compiled = self._compile_chunks(
                        gm, example_inputs, chunks, count_in_place, budget=str(budget_bytes),
                        memory="",
                        time_limit_s=left_s / min(SPLIT_SHARING, SPLIT_ATTEMPTS - attempt))
                attempt += 1
                if len(partition.plans) == count:
                    return self._keep_split(attempts, first)
                planned = partition.plans[-1]
                left_s -= planned.seconds  # planning, not tracing and compiling, shares the limit
                attempts.append((compiled, planned, caught, dict(partition.ledger), chunks))
                stuck = planned.refused_once or \
                    planned.plan.predicted_peak_bytes > SPLIT_PROGRESS * before
                if planned.within_budget or not (planned.in_place_sums and stuck) or \
                        left_s <= 0 or attempt >= SPLIT_ATTEMPTS:
                    break
            if attempts[-1][1].within_budget or min(
                    a[1].plan.predicted_peak_bytes for a in attempts
                    if a[4] == chunks) > SPLIT_PROGRESS * before:
                break  # within the budget, or the chunks are not what sets the peak
            chunks *= 2
        return self._keep_split(attempts, first)

    def _keep_split(self, attempts: list, first: RegionPlan) -> Any:
        """The cheapest attempt within the budget, or else the cheapest of those whose
        predicted peak is within SPLIT_PEAK_TOLERANCE of the least (fewer chunks on a tie):
        its plan stays in ``plans`` and the ledger, with the whole region's reference, and
        its warnings are emitted."""
        within = [a for a in attempts if a[1].within_budget]
        if not within:
            least = min(a[1].plan.predicted_peak_bytes for a in attempts)
            within = [a for a in attempts
                      if a[1].plan.predicted_peak_bytes <= (1 + SPLIT_PEAK_TOLERANCE) * least]
        chosen = min(within, key=lambda a: (a[1].plan.cost, a[4]))
        compiled, planned, caught, ledger, _chunks = chosen
        self._retain(planned, [a[1] for a in attempts], ledger)
        planned.reference, planned.reference_peak_bytes = (first.reference,
                                                           first.reference_peak_bytes)
        planned.split_attempts = tuple((a[4], a[1].plan.predicted_peak_bytes, a[1].plan.cost)
                                       for a in attempts)
        _warn_again(caught)
        return compiled

    def _compile_region(self, gm: torch.fx.GraphModule, example_inputs: list) -> Any:
        # A region is known by its parameters: compiled again for a new shape, it replaces
        # its own entry among what the step's regions hold (partition.py).
        params = tuple(id(x) for x in example_inputs if isinstance(x, torch.nn.Parameter))
        self._partition.region_key = params or len(self._partition.plans)
        if self.compiler == "aot_eager":
            from torch._dynamo.backends.common import aot_autograd

            return aot_autograd(fw_compiler=_boxed_eager, bw_compiler=_boxed_eager,
                                partition_fn=self._partition)(gm, example_inputs)
        from torch._functorch import config as functorch_config
        from torch._inductor import config as inductor_config
        from torch._inductor.compile_fx import compile_fx

        partitioner = _partitioner_class()(self._partition)
        then = self.inductor_config.get("_post_fusion_custom_pass",
                                        inductor_config._post_fusion_custom_pass)
        # The caches of compiled graphs key on the graph, not on remat's budget: a graph
        # compiled at another budget (or by plain torch.compile) must not be reused. Given as
        # compile_fx's config_patches, the settings hold for the backward too. AOTAutograd
        # compiles the backward with the forward here (not at the first backward pass), so
        # that Inductor's estimate of both is known before the region is accepted.
        # Inductor's peak-memory reordering is off (the user may turn it on): remat's order is
        # planned, and that pass reads a concatenation's writers as buffers of their own
        # although the first of them allocates the whole concatenation, so it moves them
        # early (stage_fusion.py).
        patches = {"reorder_for_peak_memory": False, **self.inductor_config,
                   "custom_partitioner_fn": partitioner,
                   "fx_graph_cache": False,
                   "_post_fusion_custom_pass": peak_pass(self._record_peak, then=then)}

        def compile_region():
            with functorch_config.patch(enable_autograd_cache=False,
                                        force_non_lazy_backward_lowering=True), \
                    stage_barrier():
                return compile_fx(gm, example_inputs, config_patches=patches)
        return self._compile_checked(compile_region)

    def _compile_checked(self, compile_region: Callable[[], Any]) -> Any:
        """Compiles the region; while Inductor estimates the compiled plan more than
        INDUCTOR_SLACK above its budget, plans and compiles it again below the budget, by the
        ratio of the two (after an attempt below every schedule found, halfway back up), at
        most RETRIES times, and not after an attempt estimated as an earlier one or a least-peak
        attempt estimated no lower than an earlier one; keeps the best attempt (_keep;
        inductor_peak.py)."""
        partition = self._partition
        attempts = []  # (compiled, region plan, warnings, ledger)
        self._budget_scale = planned_scale = 1.0
        try:
            for attempt in range(1 + RETRIES):
                count = len(partition.plans)
                if attempt == 0:
                    compiled, caught = compile_region(), []
                else:
                    # An attempt's warnings are emitted only if it is kept.
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            compiled = compile_region()
                        except InfeasibleBudgetError:
                            break  # strict=True below the budget: the earlier attempt stands
                if len(partition.plans) == count:  # nothing planned (no backward)
                    _warn_again(caught)
                    return compiled
                planned = partition.plans[-1]
                attempts.append((compiled, planned, caught, dict(partition.ledger)))
                budget = attempts[0][1].plan.budget_bytes
                estimate = planned.inductor_peak
                earlier = [a[1].inductor_peak for a in attempts[:-1]
                           if a[1].inductor_peak is not None]
                if estimate is not None and earlier and (
                        any(abs(e - estimate) <= SAME_ESTIMATE * estimate for e in earlier) or
                        (planned.plan.status == "least-peak" and estimate >= min(earlier))):
                    # The plan moved and the estimate did not (its peak is elsewhere), or even
                    # the least peak found is estimated no lower than an earlier plan.
                    break
                if attempt > 0 and planned.plan.status == "least-peak":
                    # Below what any schedule found reaches: halfway (geometrically) back up.
                    self._budget_scale = math.sqrt(planned_scale * self._budget_scale)
                    continue
                if estimate is None or estimate <= budget * (1 + INDUCTOR_SLACK) or \
                        planned.plan.status in _NOT_RETRIED:
                    break
                planned_scale = self._budget_scale
                self._budget_scale *= budget / estimate
        finally:
            self._budget_scale = 1.0
        return self._keep(attempts)

    def _retain(self, kept: RegionPlan, planned: list, ledger: dict) -> None:
        """Of the region's ``planned`` attempts, ``kept`` stays in ``plans`` and its ``ledger``
        is the step's; the others leave."""
        partition = self._partition
        for other in planned:
            if other is not kept:
                partition.plans.remove(other)
                partition.marked = {k: v for k, v in partition.marked.items() if v is not other}
        partition.ledger.clear()
        partition.ledger.update(ledger)

    def _keep(self, attempts: list) -> Any:
        """The cheapest attempt whose estimate is within INDUCTOR_SLACK of the budget (the
        first attempt's), or else the one of least estimate: its plan stays in ``plans`` and
        the ledger, the others' leave, and its warnings are emitted (but for a least-peak plan
        made below the budget that peaks within it: that one meets the budget)."""
        budget = attempts[0][1].plan.budget_bytes
        within = [a for a in attempts if a[1].inductor_peak is not None and
                  a[1].inductor_peak <= budget * (1 + INDUCTOR_SLACK)]
        chosen = (min(within, key=lambda a: a[1].plan.cost) if within else
                  min(attempts, key=lambda a: (a[1].inductor_peak or 0, a[1].plan.cost)))
        compiled, planned, caught, ledger = chosen
        if planned is not attempts[0][1] and planned.plan.predicted_peak_bytes <= budget:
            # Over its own lower budget and within the one asked, a least-peak plan meets the
            # budget: no note, and no warning that it is over.
            planned.note = ""
            caught = [w for w in caught if not issubclass(w.category, BudgetWarning)]
        self._retain(planned, [a[1] for a in attempts], ledger)
        planned.attempts = tuple((a[1].plan.budget_bytes, a[1].plan.predicted_peak_bytes,
                                  a[1].inductor_peak, a[1].plan.cost) for a in attempts)
        if planned is not attempts[0][1]:
            planned.tightened = (
                f"planned within {_core.format_bytes(planned.plan.budget_bytes)}, below the "
                f"budget {_core.format_bytes(budget)}: Inductor estimated the plan made at the "
                f"budget at {_core.format_bytes(attempts[0][1].inductor_peak)}, and this one at "
                f"{_core.format_bytes(planned.inductor_peak)}")
        _warn_again(caught)
        self._check_estimate(planned, budget)
        return compiled

    def _record_peak(self, mark: int, graph: str, peak: int) -> None:
        """Records Inductor's estimate of a compiled graph of the region marked ``mark``."""
        planned = self._partition.marked.get(mark)
        if planned is not None:
            planned.inductor_peak_bytes[graph] = peak

    def _check_estimate(self, planned: RegionPlan, budget: int) -> None:
        """A BudgetWarning when Inductor's estimate is more than INDUCTOR_SLACK above both the
        region's budget and remat's prediction."""
        estimate, plan = planned.inductor_peak, planned.plan
        if estimate is None:
            return
        limit = max(budget, plan.predicted_peak_bytes)
        if estimate > limit * (1 + INDUCTOR_SLACK):
            region = self._partition.plans.index(planned)
            warnings.warn(
                f"remat: region {region}: Inductor estimates its compiled graphs' peak at "
                f"{_core.format_bytes(estimate)}, {estimate / max(1, limit):.2f}x remat's plan "
                f"({_core.format_bytes(plan.predicted_peak_bytes)} predicted, budget "
                f"{_core.format_bytes(budget)}, {len(planned.attempts)} attempt(s)): "
                "Inductor's fusion and kernel order keep more live than remat's schedule",
                BudgetWarning, stacklevel=5)

    def __repr__(self) -> str:
        return f"RematBackend({self.compiler}, {len(self._partition.plans)} regions planned)"


def backend(*, budget: Optional[Any] = None, memory: Optional[Any] = None,
            optimizer: Optional[torch.optim.Optimizer] = None, strategy: str = "optimal",
            time_limit_s: float = 60.0, compiler: str = "inductor", threads: int = 1,
            seed: int = 1, lower_bound: bool = True, gap: float = 1e-3,
            unknown_ops: str = "error", flops_per_byte: Union[float, str] = 1.0,
            workspace: bool = True, inductor_config: Optional[dict] = None,
            strict: bool = False, schedule: Optional[Any] = None,
            fusion: Optional[bool] = None, chunks: Union[str, int] = "auto") -> RematBackend:
    """A torch.compile backend (``torch.compile(model, backend=remat.torch.backend(...))``).

    The options are ``remat.torch.wrap``'s: exactly one of ``budget`` or ``memory`` (with
    ``optimizer=`` to count its state), ``strategy``, ``time_limit_s`` per region.
    ``compiler`` is ``"inductor"`` or ``"aot_eager"``; ``inductor_config`` patches Inductor's
    configuration while it compiles (e.g. ``{"score_fusion_memory_threshold": 10**12}`` stops
    Inductor's horizontal fusion from computing a recomputation early, see docs/python.md).
    Compile with ``dynamic=False``: remat plans one schedule per input shape. A region with no
    schedule within its budget runs the least-peak schedule found (a language model's head and
    loss, and MLPs, split into chunks of tokens first, where that meets the budget), with a
    ``remat.BudgetWarning`` (``strict=True`` raises
    InfeasibleBudgetError instead).
    ``schedule`` (a schedule file's path, or a list of them) reuses saved plans
    (``RegionPlan.save_schedule``): each region follows the file made for its graph instead of
    being planned, and InputError names the files when none was. ``fusion`` plans the graph
    Inductor runs, each chain of fusible operations one node that costs its kernel and holds
    only what is read after it (fusion.py); the default is on
    under Inductor, off with ``aot_eager``. ``chunks`` is ``wrap``'s. Raises UsageError at once
    for a bad option.
    """
    check_choice("compiler", compiler, COMPILERS)
    if inductor_config is not None:
        from torch._inductor import config as inductor_settings

        if not isinstance(inductor_config, dict):
            raise UsageError("inductor_config must be a dict of Inductor settings, got "
                             f"{type(inductor_config).__name__}")
        unknown = [k for k in inductor_config if not hasattr(inductor_settings, k)]
        if unknown:
            raise UsageError(f"inductor_config: Inductor has no setting {unknown[0]!r}")
    settings = region_settings(budget=budget, memory=memory, optimizer=optimizer,
                               strategy=strategy, time_limit_s=time_limit_s, threads=threads,
                               seed=seed, lower_bound=lower_bound, gap=gap,
                               unknown_ops=unknown_ops, flops_per_byte=flops_per_byte,
                               workspace=workspace, strict=strict, schedule=schedule,
                               chunks=chunks)
    if fusion is not None:
        check_bool("fusion", fusion)
    return RematBackend(settings, compiler, inductor_config, fusion)
