"""Inductor's own estimate of each compiled graph's peak: remat's prediction checked at compile
time.

remat plans a region on its own model of the joint graph; Inductor then fuses the forward and
backward graphs that remat emits into kernels, and a kernel that fuses a recomputation into another
one, or writes a buffer remat's model does not have, changes what is live. Inductor
estimates the peak of the kernels it will run (``torch._inductor.memory``: each buffer from
its kernel to its last reader, the graph inputs it frees, i.e. the saved values and not the
parameters or tangents, and its outputs to the end). A scheduler pass run right after fusion
(Inductor's ``_post_fusion_custom_pass``) records that estimate for each graph of a planned
region, which it finds by a mark the partitioner leaves on the graph module. The estimate is
of the fused order, the order the kernels run in: the backend turns Inductor's peak-memory
reordering off (stage_fusion.py), and where the user turns it on, that pass only keeps an
order of lower estimate (measured against remat's prediction in docs/BENCHMARKS.md, "Under
torch.compile: remat against PyTorch's knob").
"""

from __future__ import annotations

import warnings
from typing import Callable, Optional

from torch import fx

__all__ = ["REGION_MARK", "mark_region", "peak_pass"]

# The key, in a graph module's ``meta``, of the index of the region it was emitted for.
REGION_MARK = "remat_region"


def mark_region(index: int, *modules: fx.GraphModule) -> None:
    """Marks the graphs emitted for region ``index`` (copies of them keep the mark)."""
    for module in modules:
        module.meta[REGION_MARK] = index


def peak_pass(record: Callable[[int, str, int], None], then: Optional[Callable] = None):
    """An Inductor scheduler pass that calls ``record(region, "forward" or "backward",
    estimated peak bytes)`` for each marked graph it compiles, after running ``then`` (a pass
    of the user's, whose order it estimates)."""
    from torch._inductor.custom_graph_pass import CustomSchedulerPass

    class _PeakPass(CustomSchedulerPass):
        def __call__(self, nodes):
            if then is not None:
                nodes = then(nodes)
            from torch._inductor.virtualized import V

            module = getattr(V.graph, "module", None)
            region = getattr(module, "meta", {}).get(REGION_MARK)
            if region is None:
                return nodes
            try:
                peak = _estimate(nodes)
            except Exception as error:  # noqa: BLE001: a check must never break the compile
                warnings.warn(f"remat: Inductor's peak estimate of region {region} failed "
                              f"({type(error).__name__}: {error})", stacklevel=2)
                return nodes
            record(region, "backward" if V.graph.is_backward else "forward", peak)
            return nodes

        def uuid(self):
            return None  # no cache: the pass records, it does not change the graph

        def __deepcopy__(self, memo):
            return self  # Inductor copies its configuration; the records are shared

        def __reduce__(self):
            return (str, ("remat.torch.backend peak estimate",))

    return _PeakPass()


def _estimate(nodes) -> int:
    """Inductor's estimated peak bytes of ``nodes`` in this order (the graph being compiled)."""
    from torch._inductor import memory
    from torch._inductor.virtualized import V
    from torch.utils._ordered_set import OrderedSet

    scheduler = V.graph.scheduler
    peak, _ = memory.prepare_planning_info(nodes, scheduler.name_to_buf,
                                           scheduler.name_to_fused_node,
                                           OrderedSet(V.graph.graph_inputs.keys()),
                                           OrderedSet(V.graph.get_output_names()))
    return int(peak)
