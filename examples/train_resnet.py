"""A few SGD steps of a ResNet-18-style network at half its activation peak, planned by remat.

``remat.torch.wrap(model, budget=...)`` plans the training step at the model's first call (which
activations to keep, which to compute again, within the budget) and runs the plan inside
autograd; the loop stays the user's own: ``loss.backward()``, ``optimizer.step()``. The script
prints the plan, each step's loss, whether the first step's gradients equal plain autograd's,
and one step's memory as the plan predicts it and as torch.profiler measures it, beside plain
autograd's. Run: .venv/bin/python examples/train_resnet.py
"""

import argparse
import copy
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

import networks  # noqa: E402  (the ResNet-18-style network of the tests)
import remat  # noqa: E402
import remat.torch  # noqa: E402
from remat.torch.workspace import quiet_profiler  # noqa: E402


def measured_step_bytes(model, loss_fn, x, y) -> int:
    """The most memory one step (forward, loss, backward) holds above what it starts with: the
    largest net CPU allocation in torch.profiler's memory events. The gradients are dropped
    before it starts, so the figure is the activations plus the gradients backward creates."""
    model.zero_grad(set_to_none=True)
    quiet_profiler()  # no "USDT ... profiler_start" lines from torch.profiler's engine
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        loss_fn(model(x), y).backward()
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                    key=lambda e: e.start_ns())
    level = peak = 0
    for e in events:
        level += e.nbytes()
        peak = max(peak, level)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--image", type=int, default=32)
    parser.add_argument("--budget", default="50%")
    parser.add_argument("--strategy", default="optimal")
    parser.add_argument("--time-limit", type=float, default=30.0)
    args = parser.parse_args()

    model, loss_fn, (x, y) = networks.resnet(batch=args.batch, image=args.image,
                                             blocks=(2, 2, 2, 2), width=16)
    plain = copy.deepcopy(model)  # plain autograd, for the gradients and the memory beside it
    planned = remat.torch.wrap(model, budget=args.budget, strategy=args.strategy,
                               time_limit_s=args.time_limit)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for i in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        start = time.perf_counter()
        loss = loss_fn(planned(x), y)  # the first call plans the step
        loss.backward()
        if i == 0:
            print(f"planned and ran the first step in {time.perf_counter() - start:.1f} s")
            print(f"plan: {planned.plan}")
            plain.zero_grad(set_to_none=True)
            loss_fn(plain(x), y).backward()
            same = all(torch.equal(p.grad, q.grad)
                       for p, q in zip(model.parameters(), plain.parameters()))
            print("first step's gradients: " + ("bit-identical to plain autograd's" if same else
                                       "differ from plain autograd's"))
        optimizer.step()
        print(f"step {i}: loss {loss.item():.4f}")

    plan = planned.plan
    gradients = sum(p.numel() * p.element_size() for p in model.parameters())
    ours = measured_step_bytes(planned, loss_fn, x, y)
    theirs = measured_step_bytes(plain, loss_fn, x, y)
    fmt = remat.format_bytes
    print("memory of one step, measured by torch.profiler: activations and the gradients it "
          f"creates ({fmt(gradients)}), which the plan's budget does not count")
    print(f"  remat           {fmt(ours):>10} measured; predicted {fmt(plan.predicted_peak_bytes)}"
          f" + gradients = {fmt(plan.predicted_peak_bytes + gradients)}")
    print(f"  plain autograd  {fmt(theirs):>10} measured; predicted "
          f"{fmt(plan.no_remat_peak_bytes)} + gradients = "
          f"{fmt(plan.no_remat_peak_bytes + gradients)} at most: its peak comes before backward "
          "has made them all")
    print(f"  remat's step holds {ours / theirs:.2f}x of plain autograd's")
    print(f"compute: the plan predicts {plan.overhead:.3f}x the {plan.cost_unit}s of a step "
          f"without recomputation ({plan.recomputations} recomputations); step time is not "
          "measured here:\n  on a shared CPU at this size it follows the load more than the "
          "FLOPs (scripts/bench_compiled.py times steps)")


if __name__ == "__main__":
    main()
