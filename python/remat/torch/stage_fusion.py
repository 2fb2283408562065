"""Recomputations stay in their stage: a rule for what Inductor's scheduler may fuse.

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
without a tag (torch's own partitions, what Inductor's passes add) are not held back. The
forward graph is left to Inductor: there the rule (as first measured, every origin of a
kernel counted) raised the benchmark's GRU at 70% (its forward peak 32.99 MB for 32.86), and
lowered no other model's measured peak (docs/BENCHMARKS.md, "Recomputations kept in their
stage").

The backend also turns off Inductor's reordering for peak memory (``reorder_for_peak_memory``,
which the user's ``inductor_config`` may turn on again): the kernels keep remat's order. That
pass reads each writer of a concatenation kernel (a value Inductor writes straight into its
slice of the concatenation) as a buffer of its own, and the concatenation as allocated after
its last writer, where the generated code allocates the whole concatenation at its first
writer. Refusing fusions leaves more writers unfused, and the pass moved each to right after
the value it copies, which looked like freeing that value: on the benchmark's GRU at 70% the
6 MiB concatenation of the input projection's gradient was then allocated at the start of the
backward (docs/BENCHMARKS.md).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from torch import fx

__all__ = ["STAGE", "tag", "stage_barrier"]

# The key, in an emitted FX node's meta, of (stage, recomputed).
STAGE = "remat_stage"


def tag(node: fx.Node, stage: int, recomputed: bool) -> None:
    """Marks ``node`` as an operation of ``stage``'s computation (a recomputation or not)."""
    node.meta[STAGE] = (stage, recomputed)


def stages_of(snode: Any) -> tuple[set[int], bool]:
    """The stages of the operations a scheduler node of Inductor computes, and whether one of
    them is a recomputation. Each part counts as the last tagged operation among its origins
    (in graph order): the one whose value it writes. The others are pointwise producers that
    Inductor inlined into it, computed again inside the kernel wherever it runs; counted, they
    made a concatenation's writer on the GRU a kernel of two stages, which then ran apart from
    its own step's kernel and held that step's saved values (docs/BENCHMARKS.md)."""
    stages: set[int] = set()
    recomputed = False
    for part in snode.get_nodes():
        origins = getattr(getattr(part, "node", None), "origins", None) or ()
        marked = [o for o in origins if STAGE in getattr(o, "meta", {})]
        if marked:
            stage, again = max(marked, key=_position).meta[STAGE]
            stages.add(stage)
            recomputed = recomputed or again
    return stages, recomputed


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

        if V.graph.is_backward and moves_a_recomputation(node1, node2):
            from torch._inductor.scheduler import WhyNoFuse

            WhyNoFuse(node1, node2)("remat: a recomputation stays in its stage")
            return False
        return self._inner.can_fuse(scheduler, node1, node2, shared_data_score)


@contextmanager
def stage_barrier() -> Iterator[None]:
    """Inductor's fusion choices with the stage rule, within the block (this thread)."""
    from torch._inductor.virtualized import V

    with V.set_choices_handler(_StageBarrier(V.choices)):
        yield
