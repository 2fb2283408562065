"""Measured memory of a training step, as the tests and the benchmark scripts measure it: the
largest net CPU allocation during the step, from the profiler's memory events (on CUDA, the
allocator's peak)."""

from __future__ import annotations

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from remat.torch.workspace import quiet_profiler

_MEASURED = "remat: measured step"


def step_peak_bytes(model, loss_fn, inputs) -> int:
    """Largest net allocation during one step (zero_grad, forward, loss, backward)."""
    def step():
        model.zero_grad(set_to_none=True)
        loss_fn(model(inputs[0]), *inputs[1:]).backward()

    return peak_bytes_of(step)


def device_peak_bytes(fn, device: torch.device) -> int:
    """Largest net allocation during fn(), in bytes, above what was allocated before it: the
    CUDA allocator's peak on a GPU, ``peak_bytes_of`` on the CPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - start
    return peak_bytes_of(fn)


# The mark a step may put around its backward pass (record_function), which the measurement
# reads to say whether the peak is in the backward.
BACKWARD = "remat: backward"


def peak_bytes_of(step) -> int:
    """Largest net allocation during one call of ``step``, above what was allocated when it
    began.

    The profiler reports a free only for a block it saw allocated: a block allocated before
    profiling began and freed in the window (the gradients ``zero_grad`` drops, a tensor the
    previous step left) would keep counting, and how many such frees go unseen varies from call
    to call. So the window spans two calls after a warm-up, and only the second is measured:
    what it frees, the first (or the model's set-up) allocated inside the window or before."""
    return peak_and_phase_of(step)[0]


def peak_and_phase_of(step) -> tuple[int, str]:
    """``peak_bytes_of(step)``, and where in the step it is reached: "backward" where the
    step marks its backward pass with ``record_function(BACKWARD)`` and the peak is inside
    that mark, "forward" where it marks it and the peak is outside, "" where it does not."""
    step()  # warm-up: kernels' one-time caches are not part of a step's peak
    quiet_profiler()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
        with record_function(_MEASURED):
            step()
    events = list(prof.profiler.kineto_results.events())
    mark = next(e for e in events if e.name() == _MEASURED)
    start, end = mark.start_ns(), mark.start_ns() + mark.duration_ns()
    allocations = sorted((e for e in events
                          if e.name() == "[memory]" and start <= e.start_ns() <= end),
                         key=lambda e: e.start_ns())
    backward = [(e.start_ns(), e.start_ns() + e.duration_ns()) for e in events
                if e.name() == BACKWARD and start <= e.start_ns() <= end]
    level = peak = 0
    when = start
    for e in allocations:
        level += e.nbytes()
        if level > peak:
            peak, when = level, e.start_ns()
    if not backward:
        return peak, ""
    return peak, ("backward" if any(a <= when <= b for a, b in backward) else "forward")


def gradient_bytes(model) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
