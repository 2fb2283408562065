"""What Inductor's kernels hold against a remat plan (remat/torch/stage_fusion.py): the plan's
memory stage by stage, the fusions refused because the fused kernel would hold more than the
plan's peak, and remat's C++ kernels ended where they free memory."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
import torch
from torch._inductor import ir
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.virtualized import V

from test_fusion import Origin, recording_rule

from remat.torch.stage_fusion import MEMORY, STAGE, StageMemory, _flush_at_frees, parts_of

CPU = torch.device("cpu")


def test_the_most_held_over_stages_is_the_maximum_of_the_range():
    rng = random.Random(7)
    for n in (1, 2, 3, 7, 16, 33):
        live = [rng.randrange(100) for _ in range(n)]
        memory = StageMemory(live, peak=max(live))
        for first in range(n):
            for last in range(first, n):
                assert memory.most(first, last) == max(live[first:last + 1]), (live, first, last)
        assert memory.most(n - 1, n + 5) == live[-1]  # clipped to the stages there are
        assert memory.most(3, 2) == 0


def test_a_later_parts_output_is_held_from_the_first_parts_stage():
    # The plan holds 10 bytes at stage 0, 40 at stages 1-2 (its peak) and 5 at 3.
    memory = StageMemory([10, 40, 40, 5], peak=40)
    assert memory.excess([(1, 8)]) == -40  # one stage: nothing moves
    # A part of stage 3 that writes 20 bytes, run at stage 0: held over stages 0-2.
    assert memory.excess([(0, 1), (3, 20)]) == 40 + 20 - 40
    # Run from stage 2, the part is ahead of the plan over stage 2 only: 40 + 20 held there.
    assert memory.excess([(2, 1), (3, 20)]) == 20
    # Only the part of stage 3 is ahead of the plan from stage 1 on; from stage 0 both are.
    assert memory.excess([(0, 1), (1, 30), (3, 2)]) == max(10 + 32, 40 + 2) - 40
    assert memory.excess([(3, 5), (0, 1)]) == memory.excess([(0, 1), (3, 5)])


def buffer(name, size, dtype=torch.float32):
    return ir.Buffer(name=name, layout=ir.FixedLayout(CPU, dtype, list(size)))


def kernel(*parts):
    """A stand-in for a scheduler node of Inductor: each part is (stage, the buffer it writes),
    the stage tagged on its origin as the partitioner tags it."""
    graph = SimpleNamespace(nodes=[])
    made = []
    for stage, written in parts:
        origin = Origin({STAGE: (stage, False)}, graph)
        graph.nodes.append(origin)
        written.origins = [origin]
        made.append(SimpleNamespace(node=written))
    return SimpleNamespace(get_nodes=lambda: made, get_name=lambda: "op")


def graph_handler(memory, backward=False, to_free=()):
    module = SimpleNamespace(meta={} if memory is None else {MEMORY: memory})
    return SimpleNamespace(is_backward=backward, module=module,
                           sizevars=SimpleNamespace(optimization_hint=int),
                           scheduler=SimpleNamespace(buffer_names_to_free=set(to_free)))


def test_a_part_writing_into_a_concatenation_counts_the_whole_concatenation():
    whole = buffer("cat", (16, 8))
    slice_ = ir.ReinterpretView(data=ir.StorageBox(whole),
                                layout=ir.FixedLayout(CPU, torch.float32, [1, 8], offset=8))
    writer = ir.Buffer(name="copy", layout=ir.NonOwningLayout(slice_))
    mask = buffer("mask", (4, 8), torch.bool)
    with V.set_graph_handler(graph_handler(None)):
        assert parts_of(kernel((5, writer), (6, mask))) == [(5, 16 * 8 * 4), (6, 4 * 8)]


@pytest.mark.parametrize("backward", [False, True])
def test_a_forward_fusion_that_holds_more_than_the_plans_peak_is_refused(backward):
    rule, asked = recording_rule()
    # The plan peaks at 1,000 bytes at stages 2-3, frees most of it at stage 4 and writes 300
    # bytes at stage 5.
    memory = StageMemory([100, 500, 1000, 1000, 200, 500], peak=1000)
    early = kernel((1, buffer("a", (10,))))  # 40 bytes
    late = kernel((5, buffer("b", (75,))))  # 300 bytes
    cases = [
        (early, late, False),  # 300 bytes from stage 1 on: 1,300 at the peak
        (kernel((3, buffer("c", (1,)))), kernel((5, buffer("d", (1,)))), False),  # 4 bytes
        (kernel((4, buffer("e", (1,)))), late, True),  # from stage 4, after the plan's free
        (early, kernel((2, buffer("f", (1,)))), True),  # 4 bytes at stage 1, below the peak
        (late, kernel((5, buffer("g", (1,)))), True),  # one stage
        # Over the peak already, and no further: what is over is not this fusion's doing.
        (kernel((1, buffer("h", (10,))), (5, buffer("i", (75,)))),
         kernel((1, buffer("j", (1,)))), True),
    ]
    with V.set_graph_handler(graph_handler(memory, backward)):
        for node1, node2, fuses in cases:
            asked.clear()
            # In the backward graph, Inductor's own choices (the rule raised the GRU's
            # backward there: docs/BENCHMARKS.md at 8528922, "Kernels that hold
            # what the plan holds").
            fuses = fuses or backward
            assert rule.can_fuse(None, node1, node2, 1) is fuses, (node1, node2)
            assert asked == ([(node1, node2)] if fuses else [])
    # A graph that is not a remat plan's: Inductor's own choices.
    with V.set_graph_handler(graph_handler(None, backward)):
        assert rule.can_fuse(None, early, late, 1)


def test_remats_cpu_kernels_end_where_they_free_memory():
    cpp = SimpleNamespace(_ready_to_flush=False)
    memory = StageMemory([1], peak=1)
    before = CppScheduling.ready_to_flush
    with _flush_at_frees():
        with V.set_graph_handler(graph_handler(memory, to_free={"buf3"})):
            assert CppScheduling.ready_to_flush(cpp)
        with V.set_graph_handler(graph_handler(memory)):
            assert not CppScheduling.ready_to_flush(cpp)
        with V.set_graph_handler(graph_handler(None, to_free={"buf3"})):
            assert not CppScheduling.ready_to_flush(cpp)  # not a remat plan's graph
            cpp._ready_to_flush = True  # Inductor's own reasons stand
            assert CppScheduling.ready_to_flush(cpp)
    assert CppScheduling.ready_to_flush is before
