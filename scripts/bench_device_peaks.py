"""Predicted against measured step peaks of remat's backend on a device (docs/BENCHMARKS.md,
"Fidelity: predicted against measured peaks").

For each model (transformers' GPT-2 and Llama built from configs, python/tests/hf_models.py,
their own loss), each compiler (``aot_eager``, ``inductor``) and each budget, the model is
compiled with ``remat.torch.backend(budget=B, compiler=C)`` (every other option its default)
and one warm-up step captures, plans and compiles it. Then one step's peak is measured: the
largest allocation above what was allocated before the step (``torch.cuda.max_memory_allocated``
on a GPU, the profiler's memory events on the CPU: measure.device_peak_bytes), zero_grad,
forward, loss and backward, with the last step's gradients freed first. The parameters' gradients are allocated during the step and are
outside every plan, so the row compares the measured peak less the gradients with the plan's
predicted peak (its regions' peaks summed). Plain torch.compile with the same compiler is
measured the same way, and the step times of plain and remat alternate step by step (median).

One JSON line per row on stdout and in ``--out`` (flushed as each row ends), then a table.

Usage: python scripts/bench_device_peaks.py [--device cuda] [--models gpt2,llama]
           [--layers 24] [--width 1024] [--heads 16] [--seq 256] [--batch 2]
           [--budgets 50%,30%] [--compilers aot_eager,inductor] [--time-limit 10]
           [--steps 5] [--out rows.jsonl] [--table rows.jsonl]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import remat  # noqa: E402
import remat.torch  # noqa: E402
import hf_models  # noqa: E402
from bench_compiled import alternating_times, mb, run_step  # noqa: E402
from measure import device_peak_bytes as step_peak_bytes  # noqa: E402


def measured_peak(model, inputs, device) -> int:
    """One step's peak above what was allocated before it: the last step's gradients are
    freed first, so the new ones count (as they do in a fresh step)."""
    model.zero_grad(set_to_none=True)
    return step_peak_bytes(lambda: model(*inputs).backward(), device)


def plan_fields(plans) -> dict:
    """The regions' plans summed (costs, peaks, budgets) and listed (strategy, status, gap)."""
    return {
        "regions": len(plans),
        "nodes": sum(p.plan.nodes for p in plans),
        "recomputations": sum(p.plan.recomputations for p in plans),
        "budget_bytes": sum(p.plan.budget_bytes for p in plans),
        "predicted_peak_bytes": sum(p.plan.predicted_peak_bytes for p in plans),
        "no_remat_peak_bytes": sum(p.plan.no_remat_peak_bytes for p in plans),
        "overhead": (sum(p.plan.cost for p in plans) / sum(p.plan.no_remat_cost for p in plans)),
        "gaps": [p.plan.gap for p in plans],
        "strategies": [f"{p.plan.strategy} ({p.plan.status})" for p in plans],
        "planning_s": sum(p.seconds for p in plans),
    }


def bench(name: str, compiler: str, budgets: list, args, device, out) -> None:
    module, inputs = getattr(hf_models, name)(layers=args.layers, width=args.width,
                                              heads=args.heads, batch=args.batch, seq=args.seq)
    module = module.to(device).train()
    inputs = [t.to(device) for t in inputs]
    grad_bytes = sum(p.numel() * p.element_size() for p in module.parameters())
    torch._dynamo.reset()
    plain = torch.compile(copy.deepcopy(module), backend=compiler, dynamic=False)
    started = time.perf_counter()
    run_step(plain, None, inputs)()
    plain_compile_s = time.perf_counter() - started
    plain_peak = measured_peak(plain, inputs, device)
    for budget in budgets:
        row = {"model": name, "compiler": compiler, "budget": budget, "layers": args.layers,
               "width": args.width, "seq": args.seq, "batch": args.batch,
               "device": str(device), "gradient_bytes": grad_bytes,
               "plain_peak_bytes": plain_peak, "plain_compile_s": plain_compile_s}
        try:
            backend = remat.torch.backend(budget=budget, compiler=compiler,
                                          time_limit_s=args.time_limit)
            ours = torch.compile(copy.deepcopy(module), backend=backend, dynamic=False)
            started = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                run_step(ours, None, inputs)()
            row["compile_s"] = time.perf_counter() - started
            row["warnings"] = sorted({str(w.message)[:200] for w in caught
                                      if "remat" in str(w.message).lower()})
            row.update(plan_fields(backend.plans))
            row["measured_peak_bytes"] = measured_peak(ours, inputs, device)
            row["measured_less_gradients"] = row["measured_peak_bytes"] - grad_bytes
            row["measured_over_predicted"] = (row["measured_less_gradients"]
                                              / row["predicted_peak_bytes"])
            times = alternating_times({"plain": run_step(plain, None, inputs),
                                       "remat": run_step(ours, None, inputs)},
                                      args.steps, device)
            row.update({f"{k}_step_s": v for k, v in times.items()})
        except Exception as error:  # noqa: BLE001: a failure is a result of this benchmark
            row["error"] = f"{type(error).__name__}: {str(error)[:500]}"
            traceback.print_exc()
        line = json.dumps(row)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()


def print_table(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("| model | compiler | budget | nodes | plan (x no-remat) | gap | budget MB | predicted MB "
          "| measured MB (less gradients) | measured / predicted (less gradients) | plain MB "
          "| step (x plain) | plan s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['compiler']} | {r['budget']} | {r['error']} |")
            continue
        gaps = ", ".join("-" if g is None else f"{100 * g:.2f}%" for g in r["gaps"])
        print(f"| {r['model']} | {r['compiler']} | {r['budget']} | {r['nodes']} "
              f"| {r['overhead']:.3f}x | {gaps} | {mb(r['budget_bytes'])} "
              f"| {mb(r['predicted_peak_bytes'])} | {mb(r['measured_peak_bytes'])} "
              f"({mb(r['measured_less_gradients'])}) "
              f"| {r['measured_peak_bytes'] / r['predicted_peak_bytes']:.3f} "
              f"({r['measured_over_predicted']:.3f}) | {mb(r['plain_peak_bytes'])} "
              f"| {r['remat_step_s'] / r['plain_step_s']:.2f}x | {r['planning_s']:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--models", default="gpt2,llama")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--budgets", default="50%,30%")
    parser.add_argument("--compilers", default="aot_eager,inductor")
    parser.add_argument("--time-limit", type=float, default=10)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", default="")
    parser.add_argument("--table", default="", help="print the table of a results file")
    args = parser.parse_args()
    if args.table:
        print_table(args.table)
        return
    device = torch.device(args.device)
    torch._dynamo.config.cache_size_limit = 64
    budgets = args.budgets.split(",")
    print(json.dumps({"torch": torch.__version__, "device": str(device),
                      "name": torch.cuda.get_device_name(device) if device.type == "cuda"
                      else "cpu"}), flush=True)
    with open(args.out, "w") if args.out else open(os.devnull, "w") as out:
        for compiler in args.compilers.split(","):
            for name in args.models.split(","):
                try:
                    bench(name, compiler, budgets, args, device, out)
                except Exception:  # noqa: BLE001: go on with the next model
                    traceback.print_exc()
    if args.out:
        print_table(args.out)


if __name__ == "__main__":
    main()
