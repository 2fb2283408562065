"""The measured peak of a step and where it is reached (measure.py), on steps whose
allocations are known."""

from __future__ import annotations

import torch
from torch.profiler import record_function

from measure import BACKWARD, peak_and_phase_of

MB = 1 << 20


def step_with(forward_mb: int, backward_mb: int, *, marked: bool = True):
    """A step that holds ``forward_mb`` MiB, drops it, then holds ``backward_mb`` MiB inside
    the backward mark (or without a mark)."""
    def step():
        first = torch.ones(forward_mb * MB, dtype=torch.uint8)
        del first
        if marked:
            with record_function(BACKWARD):
                second = torch.ones(backward_mb * MB, dtype=torch.uint8)
        else:
            second = torch.ones(backward_mb * MB, dtype=torch.uint8)
        del second
    return step


def test_the_peak_and_the_phase_it_is_in():
    peak, phase = peak_and_phase_of(step_with(8, 2))
    assert phase == "forward"
    assert 8 * MB <= peak < 9 * MB
    peak, phase = peak_and_phase_of(step_with(2, 8))
    assert phase == "backward"
    assert 8 * MB <= peak < 9 * MB


def test_a_step_without_the_mark_has_no_phase():
    peak, phase = peak_and_phase_of(step_with(2, 8, marked=False))
    assert phase == ""
    assert 8 * MB <= peak < 9 * MB
