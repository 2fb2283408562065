"""remat's torch.compile backend under FSDP2, against plain torch.compile under FSDP2, on the
Llama of bench_compiled's ``llama-32k`` (python/tests/hf_models.py: 4 layers, width 256, 4
heads, vocabulary 32000, trained on its own loss), batch 4 x 128 split over 2 gloo processes on
the CPU (2 sequences per rank).

Each rank ``fully_shard``s every decoder layer and then the model, and compiles it with
``torch.compile(net, backend=..., dynamic=False)``: plain (``"inductor"``) and remat
(``remat.torch.backend(budget=f, time_limit_s=...)``) at each fraction f. Measured per rank:

- peak: the largest net allocation of one step (zero_grad(set_to_none=True), forward returning
  the loss, backward) above the level before it, from the profiler's memory events
  (python/tests/measure.py ``peak_bytes_of``);
- step time: the median of --steps steps after a warm-up step, plain and remat taking turns;
- max grad diff: max |g_remat - g_plain| over max |g_plain|, over every parameter's whole
  gradient (``p.grad.full_tensor()``);
- remat's regions: how many it planned, each one's chunks (split.py: the head and its loss in
  chunks of tokens; 1 where whole) and whether its plan is within its budget.

Usage: .venv/bin/python scripts/bench_fsdp2.py [--fractions 0.5] [--steps 5]
           [--time-limit 30] [--out results.json]
       .venv/bin/python scripts/bench_fsdp2.py --table results.json
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

# c10 logs once per process that the profiler saw a block freed which was allocated before it
# started: the measurement expects it (python/tests/measure.py). Read when torch loads.
os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")

import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))

import hf_models  # noqa: E402
import remat  # noqa: E402
import remat.torch  # noqa: E402
from measure import peak_bytes_of  # noqa: E402
from test_training_stack import _free_port, _process_group  # noqa: E402  (gloo, 1 thread)

WORLD = 2
BATCH, SEQ = 4, 128


def sharded_compiled(model, backend):
    """A copy of ``model`` with every decoder layer and then the whole model under
    ``fully_shard``, and that copy under torch.compile with ``backend``."""
    from torch.distributed.fsdp import fully_shard

    net = copy.deepcopy(model)
    for layer in net.model.model.layers:
        fully_shard(layer)
    fully_shard(net)
    return net, torch.compile(net, backend=backend, dynamic=False)


def training_step(net, compiled, ids):
    def step():
        net.zero_grad(set_to_none=True)
        compiled(ids, ids).backward()
    return step


def full_gradients(net) -> list:
    """Every parameter's whole gradient, gathered from the ranks (a collective)."""
    return [p.grad.full_tensor() for p in net.parameters()]


def relative_difference(grads, reference) -> float:
    """max |grads - reference| over max |reference|, over all parameters."""
    largest = max(float(g.abs().max()) for g in reference)
    difference = max(float((a - b).abs().max()) for a, b in zip(grads, reference))
    return difference / largest


def alternating_times(fns: dict, steps: int) -> dict:
    """Median seconds per step of each fn, after one warm-up step each, taking turns."""
    for fn in fns.values():
        fn()
    samples = {name: [] for name in fns}
    for _ in range(steps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(s) for name, s in samples.items()}


def region_row(region) -> dict:
    plan = region.plan
    return {"chunks": region.chunks, "within_budget": region.within_budget,
            "status": plan.status, "budget_bytes": plan.budget_bytes,
            "predicted_peak_bytes": plan.predicted_peak_bytes,
            "reference_peak_bytes": region.reference_peak_bytes,
            "nodes": plan.nodes, "note": region.note}


def worker(rank: int, fractions: list, steps: int, time_limit_s: float, port: int,
           out_dir: str) -> None:
    # Every copy of the model compiles its code objects again, per backend.
    torch._dynamo.config.recompile_limit = 256
    torch._dynamo.config.accumulated_recompile_limit = 4096
    with _process_group(rank, WORLD, port):
        # The same seed on every rank: the same model and batch, of which each takes its share.
        model, (ids, _) = hf_models.llama(layers=4, width=256, heads=4, batch=BATCH, seq=SEQ,
                                          vocab=32000)
        per_rank = BATCH // WORLD
        ids = ids[per_rank * rank:per_rank * (rank + 1)]
        plain_net, plain = sharded_compiled(model, "inductor")
        plain_step = training_step(plain_net, plain, ids)
        plain_step()
        plain_peak = peak_bytes_of(plain_step)
        plain_step()
        plain_grads = full_gradients(plain_net)
        rows = []
        for fraction in fractions:
            backend = remat.torch.backend(budget=f"{100 * fraction:g}%",
                                          time_limit_s=time_limit_s)
            remat_net, ours = sharded_compiled(model, backend)
            remat_step = training_step(remat_net, ours, ids)
            start = time.perf_counter()
            with warnings.catch_warnings():  # a region over its budget: its row says so
                warnings.simplefilter("ignore", remat.BudgetWarning)
                remat_step()
            compile_s = time.perf_counter() - start
            remat_peak = peak_bytes_of(remat_step)
            remat_step()
            difference = relative_difference(full_gradients(remat_net), plain_grads)
            times = alternating_times({"plain": plain_step, "remat": remat_step}, steps)
            rows.append({"rank": rank, "fraction": fraction,
                         "plain_peak_bytes": plain_peak, "remat_peak_bytes": remat_peak,
                         "plain_step_s": times["plain"], "remat_step_s": times["remat"],
                         "remat_compile_s": compile_s, "grad_relative": difference,
                         "regions": [region_row(r) for r in backend.plans]})
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
            json.dump(rows, f)


def regions_summary(regions: list) -> str:
    """"n / chunks of each / yes" or "... / no (k over)"."""
    over = sum(not r["within_budget"] for r in regions)
    met = "yes" if over == 0 else f"no ({over} over)"
    return f"{len(regions)} / {','.join(str(r['chunks']) for r in regions)} / {met}"


def print_table(rows: list) -> None:
    print("| rank | fraction | plain peak MB | remat peak MB (x plain) | plain step ms | "
          "remat step ms (x plain) | max grad diff (x plain's largest) | "
          "regions / chunks / budget met |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        plain_peak, plain_s = r["plain_peak_bytes"], r["plain_step_s"]
        print(f"| {r['rank']} | {r['fraction']:g} | {plain_peak / 1e6:.2f} | "
              f"{r['remat_peak_bytes'] / 1e6:.2f} ({r['remat_peak_bytes'] / plain_peak:.2f}x) | "
              f"{plain_s * 1e3:.1f} | "
              f"{r['remat_step_s'] * 1e3:.1f} ({r['remat_step_s'] / plain_s:.2f}x) | "
              f"{r['grad_relative']:.1e} | {regions_summary(r['regions'])} |")
    print("\npeak: the largest net allocation of one step above the level before it "
          "(the profiler's memory events); MB = 1e6 bytes")
    for r in rows:
        for i, region in enumerate(r["regions"]):
            if not region["within_budget"]:
                print(f"- rank {r['rank']}, fraction {r['fraction']:g}, region {i}: "
                      f"{region['note']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fractions", default="0.5",
                        help="remat's budgets, as fractions of each region's reference peak")
    parser.add_argument("--steps", type=int, default=5, help="timed steps of each")
    parser.add_argument("--time-limit", type=float, default=30.0,
                        help="remat's time_limit_s for each region's planning")
    parser.add_argument("--out", default="", help="write every row as JSON here")
    parser.add_argument("--table", default="", help="print a results JSON as markdown")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            print_table(json.load(f)["rows"])
        return
    fractions = [float(f) for f in args.fractions.split(",")]
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(fractions, args.steps, args.time_limit, _free_port(), out_dir),
                 nprocs=WORLD, join=True)
        rows = []
        for rank in range(WORLD):
            with open(os.path.join(out_dir, f"rank{rank}.json")) as f:
                rows += json.load(f)
    rows.sort(key=lambda r: (r["fraction"], r["rank"]))
    results = {"machine": {"cpus": os.cpu_count(), "torch": torch.__version__,
                           "world": WORLD, "threads_per_rank": 1},
               "model": f"hf_models.llama(layers=4, width=256, heads=4, vocab=32000), batch "
                        f"{BATCH} x {SEQ} over {WORLD} ranks",
               "steps": args.steps, "time_limit_s": args.time_limit, "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
    print_table(rows)


if __name__ == "__main__":
    main()
