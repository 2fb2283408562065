"""Inductor's kernels kept to remat's plan: what its scheduler may fuse, and where the CPU's
C++ functions end.

remat emits each recomputation where its schedule places it (partition.py). Inductor's
scheduler then fuses kernels by its own measures, and a fused kernel runs at the place of the
first of its parts: a recomputation fused with a kernel of another stage runs there, so what it
writes and what it reads are live where the plan did not count them.

The partitioner tags each operation it emits for a computation (not the views it derives) with
the computation's stage and whether it is a recomputation (``STAGE`` in the FX node's meta,
which the forward and backward graphs keep). While the backend compiles a region, Inductor's
fusion choices (``torch._inductor.choices.InductorChoices.can_fuse``, through
``V.set_choices_handler``) refuse, in the backward graph, to fuse two kernels when either runs
a recomputation and together they run operations of more than one stage (the operations a
kernel runs being those whose values it writes, ``stages_of``). Fusions within a
stage, and fusions of first computations across stages (what plain torch.compile fuses), are
Inductor's own, and the choices in force before (the user's, if any) decide them. Operations
without a tag (torch's own partitions, what Inductor's passes add) are not held back. In the
forward graph this rule is not applied: there it (as first measured, every origin of a
kernel counted) raised the benchmark's GRU at 70% (its forward peak 32.99 MB for 32.86), and
lowered no other model's measured peak (docs/BENCHMARKS.md at 8528922, "Recomputations kept in
their stage").

A second rule holds in the forward graph: the partitioner leaves on each emitted graph what
its plan holds at each stage (``StageMemory``, ``MEMORY`` in the graph module's meta), and a
fusion is refused when the fused kernel, which runs at its first part's stage, would hold the
outputs of its later parts far enough ahead of their stages to go further above the plan's
peak than either kernel alone (``raises_the_peak``). It does not count the buffers a fusion
removes (a producer's output read only by the kernel it joins), and in the backward graph,
where Inductor fuses gradient chains, refusing such fusions raised the benchmark's GRU at
50% (docs/BENCHMARKS.md at 8528922, "Kernels that hold what the plan holds"): there it is not
applied.

On the CPU, Inductor writes consecutive kernels into one C++ function until an extern kernel
comes, allocating all their outputs before the call and freeing what they read last after it.
While the backend compiles, a remat graph's function ends after each kernel that is the last
reader of a buffer (``_flush_at_frees``), so that what the plan frees is freed before the next
kernel allocates.

The backend also turns off Inductor's reordering for peak memory (``reorder_for_peak_memory``,
which the user's ``inductor_config`` may turn on again): the kernels keep remat's order. That
pass reads each writer of a concatenation kernel (a value Inductor writes straight into its
slice of the concatenation) as a buffer of its own, and the concatenation as allocated after
its last writer, where the generated code allocates the whole concatenation at its first
writer. Refusing fusions leaves more writers unfused, and the pass moved each to right after
the value it copies, which looked like freeing that value: on the benchmark's GRU at 70% the
6 MiB concatenation of the input projection's gradient was then allocated at the start of the
backward (docs/BENCHMARKS.md at 8528922, "Recomputations kept in their stage").
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Optional, Sequence

from torch import fx

__all__ = ["STAGE", "MEMORY", "StageMemory", "tag", "stage_barrier"]

# The key, in an emitted FX node's meta, of (stage, recomputed).
STAGE = "remat_stage"
# The key, in an emitted graph module's meta, of its plan's StageMemory.
MEMORY = "remat_stage_memory"


def tag(node: fx.Node, stage: int, recomputed: bool) -> None:
    """Marks ``node`` as an operation of ``stage``'s computation (a recomputation or not)."""
    node.meta[STAGE] = (stage, recomputed)


class StageMemory:
    """What a plan holds at each stage (the most within it, remat's simulator) and its
    predicted peak: what a fusion that moves an operation to an earlier stage adds to."""

    def __init__(self, live: Sequence[int], peak: int):
        self.peak = int(peak)
        # levels[k][t]: the most live over stages t .. t + 2**k - 1 (a sparse table).
        self._levels = [list(live)]
        width = 1
        while 2 * width <= len(live):
            below = self._levels[-1]
            self._levels.append([max(below[t], below[t + width])
                                 for t in range(len(live) - 2 * width + 1)])
            width *= 2

    @classmethod
    def of(cls, graph: Any, schedule: Any, operations: Sequence[tuple[str, int, int]]
           ) -> "StageMemory":
        """The plan of ``schedule`` on ``graph``, whose operations (``remat.build_plan``) are
        given."""
        from remat import _core

        sim = _core.simulate(graph, schedule)
        live = [0] * len(graph.nodes)
        for (_kind, stage, _v), after in zip(operations, sim.live_bytes_after_op):
            live[stage] = max(live[stage], after)
        return cls(live, sim.peak_bytes)

    def most(self, first: int, last: int) -> int:
        """The most the plan holds over stages ``first`` .. ``last`` (inclusive)."""
        first, last = max(first, 0), min(last, len(self._levels[0]) - 1)
        if first > last:
            return 0
        k = (last - first + 1).bit_length() - 1
        return max(self._levels[k][first], self._levels[k][last - (1 << k) + 1])

    def excess(self, parts: Sequence[tuple[int, int]]) -> int:
        """How far above the plan's peak a kernel of ``parts`` (stage, bytes it writes) takes
        the memory: it runs at its first part's stage, so each later part's output is live
        from there, above what the plan holds, until its own stage."""
        if not parts:
            return -self.peak
        ordered = sorted(parts)
        ahead = sum(b for _, b in ordered)
        worst = -self.peak
        for (stage, written), (following, _) in zip(ordered, ordered[1:]):
            ahead -= written
            if following > stage:
                worst = max(worst, self.most(stage, following - 1) + ahead - self.peak)
        return worst


def stages_of(snode: Any) -> tuple[set[int], bool]:
    """The stages of the operations a scheduler node of Inductor computes, and whether one of
    them is a recomputation. Each part counts as the last tagged operation among its origins
    (in graph order): the one whose value it writes. The others are pointwise producers that
    Inductor inlined into it, computed again inside the kernel wherever it runs; counted, they
    made a concatenation's writer on the GRU a kernel of two stages, which then ran apart from
    its own step's kernel and held that step's saved values (docs/BENCHMARKS.md at 8528922,
    "Recomputations kept in their stage")."""
    stages: set[int] = set()
    recomputed = False
    for part in snode.get_nodes():
        mark = _mark_of(part)
        if mark is not None:
            stages.add(mark[0])
            recomputed = recomputed or mark[1]
    return stages, recomputed


def _mark_of(part: Any) -> Optional[tuple[int, bool]]:
    """(stage, recomputed) of a scheduler node's part: its last tagged origin's."""
    origins = getattr(getattr(part, "node", None), "origins", None) or ()
    marked = [o for o in origins if STAGE in getattr(o, "meta", {})]
    return max(marked, key=_position).meta[STAGE] if marked else None


def parts_of(snode: Any) -> list[tuple[int, int]]:
    """(stage, bytes written) of each tagged part of a scheduler node. A part that writes into
    a slice of a concatenation counts the whole concatenation, which the generated code
    allocates at its first writer."""
    found = []
    for part in snode.get_nodes():
        mark = _mark_of(part)
        if mark is not None:
            found.append((mark[0], _written_bytes(getattr(part, "node", None))))
    return found


def _written_bytes(buffer: Any) -> int:
    """Bytes of the storage an Inductor buffer writes: a concatenation's whole, for a writer
    into its slice."""
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    layout = getattr(buffer, "layout", None)
    if isinstance(layout, ir.NonOwningLayout):
        buffer = getattr(getattr(layout.view, "data", None), "data", None)
        layout = getattr(buffer, "layout", None)
    if not isinstance(layout, ir.Layout):
        return 0  # no storage of its own (several outputs, none): nothing counted
    try:
        elements = V.graph.sizevars.optimization_hint(layout.storage_size())
    except Exception:  # noqa: BLE001: a layout without a size (a mutation's): nothing counted
        return 0
    return int(elements) * layout.dtype.itemsize


def raises_the_peak(node1: Any, node2: Any, memory: StageMemory) -> bool:
    """Whether fusing two scheduler nodes would take the memory further above the plan's
    peak than either does alone (operations of later stages run at the first one's)."""
    parts1, parts2 = parts_of(node1), parts_of(node2)
    return memory.excess(parts1 + parts2) > max(0, memory.excess(parts1),
                                                memory.excess(parts2))


_order: dict[str, Any] = {"graph": None, "position": {}}


def _position(node: fx.Node) -> int:
    """``node``'s place in its graph (the positions of the last graph asked about are kept)."""
    if _order["graph"] is not node.graph:
        _order["graph"] = node.graph
        _order["position"] = {n: i for i, n in enumerate(node.graph.nodes)}
    return _order["position"].get(node, -1)


def moves_a_recomputation(node1: Any, node2: Any) -> bool:
    """Whether fusing two scheduler nodes would run a recomputation with an operation of
    another stage."""
    stages1, recomputed1 = stages_of(node1)
    stages2, recomputed2 = stages_of(node2)
    return (recomputed1 or recomputed2) and len(stages1 | stages2) > 1


class _StageBarrier:
    """Inductor's choices in force before, with fusions that move a recomputation refused."""

    def __init__(self, inner: Any):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def can_fuse(self, scheduler: Any, node1: Any, node2: Any, shared_data_score: int) -> bool:
        from torch._inductor.virtualized import V

        why = None
        if V.graph.is_backward:
            if moves_a_recomputation(node1, node2):
                why = "remat: a recomputation stays in its stage"
        else:
            memory = _plan_memory()
            if memory is not None and raises_the_peak(node1, node2, memory):
                why = "remat: the fused kernel would hold more than the plan's peak"
        if why is not None:
            from torch._inductor.scheduler import WhyNoFuse

            WhyNoFuse(node1, node2)(why)
            return False
        return self._inner.can_fuse(scheduler, node1, node2, shared_data_score)


@contextmanager
def stage_barrier() -> Iterator[None]:
    """Inductor's fusion choices with the stage rule (this thread), and remat's graphs'
    C++ kernels ended where they free memory, within the block."""
    from torch._inductor.virtualized import V

    with V.set_choices_handler(_StageBarrier(V.choices)), _flush_at_frees():
        yield


def _plan_memory() -> Optional[StageMemory]:
    """The StageMemory of the graph Inductor is compiling: None unless a remat plan's."""
    from torch._inductor.virtualized import V

    return getattr(getattr(V.graph, "module", None), "meta", {}).get(MEMORY)


def _frees_memory() -> bool:
    """Whether the graph Inductor is writing code for is a remat plan's and the kernel just
    written is the last reader of a buffer."""
    from torch._inductor.virtualized import V

    return _plan_memory() is not None and \
        bool(getattr(V.graph.scheduler, "buffer_names_to_free", None))


@contextmanager
def _flush_at_frees() -> Iterator[None]:
    """On the CPU, Inductor writes consecutive kernels into one C++ function until an extern
    kernel (a matrix product) comes: all their outputs are allocated before it runs and what
    they read last is freed after it. Within the block, a remat graph's function ends after
    each kernel that is the last reader of a buffer, so that the buffer is freed before the
    next kernel allocates, as the plan does (docs/BENCHMARKS.md at 8528922, "Kernels that
    hold what the plan holds")."""
    from torch._inductor.codegen.cpp import CppScheduling

    inner = CppScheduling.ready_to_flush

    def ready_to_flush(self: Any) -> bool:
        return inner(self) or _frees_memory()

    CppScheduling.ready_to_flush = ready_to_flush
    try:
        yield
    finally:
        CppScheduling.ready_to_flush = inner
