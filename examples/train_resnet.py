"""A few SGD steps of the ResNet-18-style test network at half its no-remat activation peak.

Each step prints the loss, the predicted and measured activation peak, and the overhead:
predicted (the plan's cost over the no-remat cost) and measured (this step's time over a plain
autograd step's, timed in the same run). Run: .venv/bin/python examples/train_resnet.py
"""

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

import networks  # noqa: E402  (the ResNet-18-style network of the tests)
import remat  # noqa: E402
import remat.torch  # noqa: E402


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
    start = time.perf_counter()
    step = remat.torch.plan_step(model, loss_fn, (x, y), budget=args.budget,
                               strategy=args.strategy, time_limit_s=args.time_limit)
    print(f"planned in {time.perf_counter() - start:.1f} s: {step.plan}")

    # Plain autograd steps for the reference time (a warm-up, then the median of three; their
    # gradients are discarded).
    times = []
    for _ in range(4):
        model.zero_grad(set_to_none=True)
        start = time.perf_counter()
        loss_fn(model(x), y).backward()
        times.append(time.perf_counter() - start)
    plain_s = statistics.median(times[1:])

    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for i in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        start = time.perf_counter()
        loss = step(x, y)
        elapsed = time.perf_counter() - start
        optimizer.step()
        run = step.last_run
        print(f"step {i}: loss {loss.item():.4f}  peak predicted "
              f"{remat.format_bytes(step.plan.predicted_peak_bytes)} measured "
              f"{remat.format_bytes(run.measured_peak_bytes)} (no-remat "
              f"{remat.format_bytes(step.plan.no_remat_peak_bytes)})  overhead predicted "
              f"{step.plan.overhead:.3f}x measured {elapsed / plain_s:.3f}x  "
              f"({run.recomputations} recomputations)")


if __name__ == "__main__":
    main()
