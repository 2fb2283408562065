"""Measured costs: each captured operation's median wall time on the example inputs."""

from __future__ import annotations

import statistics
from typing import Sequence

import torch

from remat import _core
from remat.torch.capture import CapturedStep
from remat.torch.execute import run_plan

__all__ = ["profile_costs"]


def profile_costs(captured: CapturedStep, model: torch.nn.Module,
                  inputs: Sequence[torch.Tensor], *, repeats: int = 3,
                  warmup: int = 1) -> list[float]:
    """Milliseconds per remat node: the median over ``repeats`` executions of the
    no-rematerialization plan, after ``warmup`` untimed ones. Nothing outside changes: no
    ``.grad``, no buffer update, and the random generators are restored afterwards."""
    graph = captured.to_graph([0.0] * len(captured), "ms")
    everything = _core.run_strategy("checkpoint-all", graph, 0).schedule
    operations = _core.build_plan(graph, everything)
    device = inputs[0].device if inputs else torch.device("cpu")
    clock = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state(device) if device.type == "cuda" else None
    parameters = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    samples: list[list[float]] = [[] for _ in captured.nodes]
    try:
        for i in range(warmup + repeats):
            _, stats = run_plan(captured, operations, parameters, buffers, inputs,
                                apply_effects=False, clock=clock)
            if i >= warmup:
                for v, seconds in enumerate(stats.node_times_s):
                    samples[v].append(seconds)
    finally:
        torch.set_rng_state(cpu_state)
        if cuda_state is not None:
            torch.cuda.set_rng_state(cuda_state, device)
    return [1000.0 * statistics.median(s) for s in samples]
