"""Planning deep transformers against depth (docs/BENCHMARKS.md, "Deep transformers:
planning time against depth").

For GPT-2- and Llama-shaped decoders of the transformers library (random init, the models'
own loss) at each depth, the joint graph of the model's largest compiled region is captured
(``remat.torch.backend``, ``compiler="aot_eager"`` by default: Inductor compiles a 96-layer
model for minutes on two cores) and saved. Each graph is then planned by the command line,
``remat solve --graph G --budget B --strategy checkpoint-blocks,selective,selective-fit,optimal``,
at 50% and
30% of its no-rematerialization peak, in a child process whose wall time and largest resident
memory are the planner's. Reported per depth and budget: nodes, the
cost of each strategy over the no-remat cost, optimal's certified gap, the command's seconds
and its largest resident memory (GNU time's, /usr/bin/time). ``--graphs DIR`` keeps the
captured graphs and reuses them in a later run.

Usage: .venv/bin/python scripts/bench_transformers.py [--depths 6,12,24,48,96]
           [--models gpt2,llama] [--width 64] [--seq 64] [--batch 2] [--time-limit 60]
           [--compiler aot_eager|inductor] [--out results.json] [--graphs DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))

import torch  # noqa: E402

import remat  # noqa: E402
import remat.torch  # noqa: E402
import hf_models  # noqa: E402

STRATEGIES = ("checkpoint-blocks", "selective", "selective-fit", "optimal")


def capture(model: str, depth: int, args) -> remat.Graph:
    """The remat graph of the largest region of one training step."""
    module, inputs = getattr(hf_models, model)(layers=depth, width=args.width,
                                                heads=args.heads, batch=args.batch,
                                                seq=args.seq)
    torch._dynamo.reset()
    # 100%: the capture's own planning is quick, and the graph is what matters here.
    backend = remat.torch.backend(budget="100%", compiler=args.compiler, time_limit_s=5)
    compiled = torch.compile(module, backend=backend, dynamic=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled(*inputs).backward()
    return max((r.graph for r in backend.plans), key=lambda g: g.size)


def solve(remat_bin: str, path: str, budget: str, limit: float) -> dict:
    """``remat solve --json`` in a child process: its report, wall seconds and peak RSS."""
    command = [remat_bin, "solve", "--graph", path, "--budget", budget, "--strategy",
               ",".join(STRATEGIES), "--time-limit", str(limit), "--json"]
    started = time.monotonic()
    # GNU time reports its child's largest resident set; the child of this (large) Python
    # process would inherit its high-water mark through fork.
    with tempfile.NamedTemporaryFile("r") as rss, tempfile.TemporaryFile() as out:
        child = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *command],
                               stdout=out, stderr=subprocess.DEVNULL)
        seconds = time.monotonic() - started
        out.seek(0)
        text = out.read().decode()
        kilobytes = int(rss.read().split()[-1])
    if child.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {child.returncode}: {text[:500]}")
    return {"report": json.loads(text), "seconds": seconds, "max_rss_mb": kilobytes / 1024}


def row_of(report: dict, strategy: str) -> dict:
    return next(r for r in report["results"] if r["strategy"] == strategy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", default="6,12,24,48,96")
    parser.add_argument("--models", default="gpt2,llama")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--budgets", default="50%,30%")
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--compiler", default="aot_eager", choices=("aot_eager", "inductor"))
    parser.add_argument("--remat", default=os.path.join(ROOT, "build", "src", "cli", "remat"))
    parser.add_argument("--out", default="")
    parser.add_argument("--graphs", default="", help="keep the captured graphs in this folder")
    args = parser.parse_args()
    rows = []
    print(f"{'model':6} {'depth':>5} {'nodes':>6} {'budget':>6} {'blocks':>8} {'selective':>9} "
          f"{'sel-fit':>8} {'optimal':>8} {'gap':>7} {'seconds':>8} {'MB':>6}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.graphs or scratch
        os.makedirs(folder, exist_ok=True)
        for model in args.models.split(","):
            for depth in (int(d) for d in args.depths.split(",")):
                path = os.path.join(folder, f"{model}-{depth}.json")
                if not os.path.exists(path):  # --graphs keeps captures for another run
                    capture(model, depth, args).save(path)
                for budget in args.budgets.split(","):
                    run = solve(args.remat, path, budget, args.time_limit)
                    report = run["report"]
                    cells = {}
                    for strategy in STRATEGIES:
                        r = row_of(report, strategy)
                        cells[strategy] = (r.get("overhead") if r.get("status") == "fits"
                                           else None)
                    best = row_of(report, "optimal")
                    nodes = report["graph"]["nodes"]
                    row = {"model": model, "depth": depth, "nodes": nodes,
                           "budget": budget, "overhead": cells, "gap": best.get("gap_to_lower_bound"),
                           "optimal_status": best.get("solver_status"),
                           "seconds": run["seconds"], "max_rss_mb": run["max_rss_mb"]}
                    rows.append(row)

                    def x(v):
                        return "-" if v is None else f"{v:.3f}x"
                    gap = "-" if row["gap"] is None else f"{100 * row['gap']:.2f}%"
                    print(f"{model:6} {depth:5d} {nodes:6d} {budget:>6} "
                          f"{x(cells['checkpoint-blocks']):>8} {x(cells['selective']):>9} "
                          f"{x(cells['selective-fit']):>8} {x(cells['optimal']):>8} {gap:>7} {run['seconds']:8.1f} "
                          f"{run['max_rss_mb']:6.0f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
