"""Benchmarks of the PyTorch front end (docs/BENCHMARKS.md, "The eager executor
(plan_step)").

Measured in one run, on whatever machine runs it (CPU unless --device cuda):
  1. capture and plan time for a ResNet-18-style network and a small GPT;
  2. step time under remat plans against plain autograd, next to the predicted overhead;
  3. activation peak at a 50% budget, predicted and measured;
  4. remat against PyTorch's min-cut partitioner with an activation memory budget
     (torch.compile, backend aot_eager_decomp_partition) at three equal budgets.

Peak memory for (4) is measured the same way for both: the largest net CPU allocation during
one training step, from the profiler's memory events (torch.profiler, profile_memory=True;
python/tests/measure.py, which also says why it profiles two steps and measures the second);
on CUDA, torch.cuda.max_memory_allocated above the step's start.

Usage: .venv/bin/python scripts/bench_python.py [--quick] [--out results.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

import networks  # noqa: E402  (the test networks)
from measure import peak_bytes_of  # noqa: E402  (the tests' measured peak)
import remat  # noqa: E402
import remat.torch  # noqa: E402


def step_peak_bytes(fn, device: torch.device) -> int:
    """Largest net allocation during fn(), in bytes, above what was allocated before it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - start
    return peak_bytes_of(fn)


def timed(fn, repeats: int) -> float:
    """Median seconds of fn() over `repeats` runs after one warm-up."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def plain_step(model, loss_fn, inputs):
    def run():
        model.zero_grad(set_to_none=True)
        loss_fn(model(inputs[0]), *inputs[1:]).backward()
    return run


def remat_step(model, step, inputs):
    def run():
        model.zero_grad(set_to_none=True)
        step(*inputs)
    return run


class Plans:
    """One compiled step per budget, timed once and shared by every table."""

    def __init__(self, name, model, loss_fn, inputs, strategy, time_limit_s):
        self.name, self.model, self.loss_fn, self.inputs = name, model, loss_fn, inputs
        self.strategy, self.time_limit_s = strategy, time_limit_s
        self.steps: dict[str, object] = {}
        self.rows: list[dict] = []

    def get(self, budget: str):
        if budget not in self.steps:
            start = time.perf_counter()
            captured = remat.torch.capture(self.model, self.loss_fn, self.inputs)
            capture_s = time.perf_counter() - start
            start = time.perf_counter()
            step = remat.torch.plan_step(self.model, self.loss_fn, self.inputs, budget=budget,
                                       strategy=self.strategy, time_limit_s=self.time_limit_s)
            compile_s = time.perf_counter() - start
            self.steps[budget] = step
            self.rows.append({"network": self.name, "nodes": len(captured),
                              "capture_s": capture_s, "compile_s": compile_s,
                              "strategy": self.strategy, "budget": budget,
                              "time_limit_s": self.time_limit_s, "plan": str(step.plan)})
            print(json.dumps(self.rows[-1]), flush=True)
        return self.steps[budget]

    def get_or_record(self, budget: str, rows: list, key: dict):
        """The step for `budget`, or None after adding a row that says why there is none."""
        try:
            return self.get(budget)
        except remat.Error as error:
            rows.append({"network": self.name, **key, "error": str(error)})
            print(json.dumps(rows[-1]), flush=True)
            return None


def overhead_rows(plans: Plans, budgets, repeats):
    model, loss_fn, inputs = plans.model, plans.loss_fn, plans.inputs
    rows = []
    for budget in budgets:
        step = plans.get_or_record(budget, rows, {"budget": budget})
        if step is None:
            continue
        plain_s = timed(plain_step(model, loss_fn, inputs), repeats)
        remat_s = timed(remat_step(model, step, inputs), repeats)
        # Plain autograd once more, after, so that drift of a shared machine shows.
        plain_again_s = timed(plain_step(model, loss_fn, inputs), repeats)
        reference_s = (plain_s + plain_again_s) / 2
        rows.append({"network": plans.name, "budget": budget, "strategy": plans.strategy,
                     "predicted_overhead": step.plan.overhead,
                     "measured_overhead": remat_s / reference_s,
                     "plain_step_s": [plain_s, plain_again_s], "remat_step_s": remat_s,
                     "predicted_peak_bytes": step.plan.predicted_peak_bytes,
                     "measured_peak_bytes": step.last_run.measured_peak_bytes,
                     "no_remat_peak_bytes": step.plan.no_remat_peak_bytes,
                     "recomputations": step.last_run.recomputations,
                     "gap": step.plan.gap})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def partitioner_rows(plans: Plans, fractions, repeats):
    """remat and PyTorch's partitioner at equal activation budgets (fractions of the
    no-remat activation peak that each tool estimates for itself)."""
    import torch._functorch.config as functorch_config

    model, loss_fn, inputs = plans.model, plans.loss_fn, plans.inputs
    device = inputs[0].device
    rows = []
    plain_peak = step_peak_bytes(plain_step(model, loss_fn, inputs), device)
    plain_s = timed(plain_step(model, loss_fn, inputs), repeats)
    for fraction in fractions:
        step = plans.get_or_record(f"{100 * fraction:g}%", rows, {"budget_fraction": fraction})
        if step is None:
            continue
        remat_peak = step_peak_bytes(remat_step(model, step, inputs), device)
        remat_s = timed(remat_step(model, step, inputs), repeats)

        torch._dynamo.reset()
        compiled_model = copy.deepcopy(model)
        with functorch_config.patch(activation_memory_budget=fraction):
            compiled = torch.compile(compiled_model, backend="aot_eager_decomp_partition")
            start = time.perf_counter()
            plain_step(compiled, loss_fn, inputs)()
            compile_s = time.perf_counter() - start
            torch_peak = step_peak_bytes(plain_step(compiled, loss_fn, inputs), device)
            torch_s = timed(plain_step(compiled, loss_fn, inputs), repeats)
        rows.append({"network": plans.name, "budget_fraction": fraction,
                     "plain_peak_bytes": plain_peak, "plain_step_s": plain_s,
                     "remat_peak_bytes": remat_peak, "remat_step_s": remat_s,
                     "remat_predicted_peak_bytes": step.plan.predicted_peak_bytes,
                     "remat_predicted_overhead": step.plan.overhead,
                     "torch_peak_bytes": torch_peak, "torch_step_s": torch_s,
                     "torch_first_step_s": compile_s})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--out", default="", help="write every row as JSON here")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--strategy", default="optimal")
    args = parser.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    if args.quick:
        plan_sizes = {"resnet18-style": dict(batch=4, image=32), "gpt-small": dict(batch=2)}
        run_sizes = plan_sizes
    else:
        # Capture and planning at the sizes; execution (many steps on a CPU) smaller.
        plan_sizes = {"resnet18-style": dict(batch=32, image=224),
                      "gpt-small": dict(batch=8, context=128, layers=4)}
        run_sizes = {"resnet18-style": dict(batch=8, image=112),
                     "gpt-small": dict(batch=8, context=64, layers=2)}
    builders = {"resnet18-style": lambda **kw: networks.resnet(blocks=(2, 2, 2, 2), width=64,
                                                               **kw),
                "gpt-small": networks.gpt}
    results = {"machine": {"cpus": os.cpu_count(), "torch": torch.__version__,
                           "threads": torch.get_num_threads()},
               "capture_and_plan": [], "overhead": [], "partitioner": []}

    def save():  # after each table, so that a long run keeps what it measured
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=2)

    for name, build in builders.items():
        plans = Plans(f"{name} {plan_sizes[name]}", *build(**plan_sizes[name]), args.strategy,
                      args.time_limit)
        plans.get("50%")
        results["capture_and_plan"] += plans.rows
        save()
    for name, build in builders.items():
        plans = Plans(f"{name} {run_sizes[name]}", *build(**run_sizes[name]), args.strategy,
                      args.time_limit)
        results["overhead"] += overhead_rows(plans, ["50%", "70%"], args.repeats)
        save()
        results["partitioner"] += partitioner_rows(plans, [0.3, 0.5, 0.7], args.repeats)
        results["capture_and_plan"] += plans.rows
        save()

if __name__ == "__main__":
    main()
