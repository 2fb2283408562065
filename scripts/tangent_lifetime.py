"""When does a compiled backward free a tangent? (docs/design.md §8).

A three-layer model whose output (the logits, 32 MiB) gets a real tangent from the loss outside
the compiled region, and whose first layer's backward (late in backward) allocates 32 MiB
tensors. The script prints the step's allocations and frees of 1 MiB or more, in order, with
the level after each, from the profiler's memory events: if the tangent (the first +32 of
backward) is freed right after the product that reads it (the weight's gradient, +8), the
backend frees tangents after their last reader; if it is freed last, it holds them to the end.

Usage: .venv/bin/python scripts/tangent_lifetime.py [inductor] [aot_eager] [remat]
("remat": remat's backend under Inductor at 100%).
"""

from __future__ import annotations

import os
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

N, D, E, V = 256, 64, 32768, 32768  # the first layer's output and the logits: 32 MiB each


class ThreeLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.w0 = nn.Parameter(torch.randn(D, E) * 0.01)
        self.w1 = nn.Parameter(torch.randn(E, D) * 0.01)
        self.w2 = nn.Parameter(torch.randn(D, V) * 0.01)

    def forward(self, x):
        h0 = torch.nn.functional.gelu(x @ self.w0)
        return torch.tanh(h0 @ self.w1) @ self.w2


def timeline(backend_name: str) -> str:
    torch._dynamo.reset()
    torch.manual_seed(0)
    model, x, target = ThreeLayers(), torch.randn(N, D), torch.randn(N, V)
    if backend_name == "remat":
        import remat.torch
        backend = remat.torch.backend(budget="100%", compiler="inductor", time_limit_s=10)
    else:
        backend = backend_name
    compiled = torch.compile(model, backend=backend, dynamic=False)

    def step():
        model.zero_grad(set_to_none=True)
        (compiled(x) * target).sum().backward()

    step()
    step()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_ns())
    level, shown = 0, []
    for e in events:
        level += e.nbytes()
        if abs(e.nbytes()) >= 2**20:
            shown.append(f"{e.nbytes() / 2**20:+.0f}={level / 2**20:.0f}")
    return " ".join(shown)


def main() -> None:
    for name in sys.argv[1:] or ["inductor", "aot_eager", "remat"]:
        print(f"{name}: {timeline(name)}  (MiB: change=level)", flush=True)


if __name__ == "__main__":
    main()
