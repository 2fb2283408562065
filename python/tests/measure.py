"""Measured memory of a training step, as scripts/bench_python.py measures it: the largest net
CPU allocation during the step, from the profiler's memory events."""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile


def step_peak_bytes(model, loss_fn, inputs) -> int:
    """Largest net allocation during one step (zero_grad, forward, loss, backward), after a
    warm-up step."""
    def step():
        model.zero_grad(set_to_none=True)
        loss_fn(model(inputs[0]), *inputs[1:]).backward()

    return peak_bytes_of(step)


def peak_bytes_of(step) -> int:
    """Largest net allocation during one call of ``step``, after a warm-up call."""
    step()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_ns())
    level = peak = 0
    for e in events:
        level += e.nbytes()
        peak = max(peak, level)
    return peak


def gradient_bytes(model) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
