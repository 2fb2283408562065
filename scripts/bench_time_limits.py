#!/usr/bin/env python3
"""Do commands keep their time limits on large graphs? (docs/cli.md, "Time limits and signals")

Runs every command that takes a limit (`solve` with one strategy, with several and with
`--budget min`, `sweep`, `approx-report`, `maxbatch`) on chains and random DAGs of 10^5 to 10^6
nodes, and prints per run the wall-clock time against the command's promise: the sum of
`--time-limit` over its strategy runs and bounds, or `--total-time-limit`. A run passes when
it ends within 1.10x its promise plus 1 s (with nothing else running) or 1.25x plus 2 s
(`--beside-make`: a `make -j2` of remat's core rebuilt in a loop in a scratch folder).

Usage: scripts/bench_time_limits.py [--build build] [--limit-1e5 5] [--limit-1e6 10]
                                    [--sizes 1e5,1e6] [--beside-make] [--json OUT]
Standard library only; the graphs are written to a temporary folder and removed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Run:
    graph: str
    nodes: int
    command: str
    promise_s: float
    wall_s: float = 0.0
    exit_code: int = 0
    answer: str = ""

    def ratio(self) -> float:
        return self.wall_s / self.promise_s

    def within(self, loaded: bool) -> bool:
        factor, extra = (1.25, 2.0) if loaded else (1.10, 1.0)
        return self.wall_s <= factor * self.promise_s + extra


def graphs(remat: str, folder: str, sizes: list[str]) -> list[tuple[str, str, int]]:
    """(name, path, nodes) of each graph, generated now."""
    made = []
    specs = {
        "1e5": [("chain, linear(50000)", ["graph", "linear", "50000"], 100001),
                ("random DAG", ["graph", "random-layered", "--nodes", "100000"], 100000)],
        "1e6": [("chain, unlabeled", ["graph", "random-layered", "--nodes", "1000000",
                                      "--width", "1", "--span", "1", "--edges", "999999"],
                 1000000),
                ("random DAG", ["graph", "random-layered", "--nodes", "1000000"], 1000000)],
    }
    for size in sizes:
        for k, (name, args, nodes) in enumerate(specs[size]):
            path = os.path.join(folder, f"{size}-{k}.json")
            subprocess.run([remat, *args, "-o", path], check=True, stdout=subprocess.DEVNULL)
            made.append((name, path, nodes))
    return made


def commands(path: str, limit: float, labelled: bool) -> list[tuple[str, list[str], float]]:
    """(label, arguments, promise in seconds) of each command on one graph (docs/cli.md: each
    strategy run and each bound get the limit; the command keeps their sum)."""
    L = f"{limit:g}"
    runs = [
        ("solve --strategy evict", ["solve", "--graph", path, "--budget", "50%",
                                    "--strategy", "evict", "--time-limit", L], 2 * limit),
        ("solve --strategy local-search", ["solve", "--graph", path, "--budget", "50%",
                                           "--strategy", "local-search", "--time-limit", L],
         2 * limit),
        ("solve --strategy optimal", ["solve", "--graph", path, "--budget", "50%",
                                      "--strategy", "optimal", "--time-limit", L], 2 * limit),
        ("solve --budget min --strategy local-search",
         ["solve", "--graph", path, "--budget", "min", "--strategy", "local-search",
          "--time-limit", L], 3 * limit),
        (f"sweep --points 2 --strategies evict,local-search --total-time-limit {2 * limit:g}",
         ["sweep", "--graph", path, "--points", "2", "--strategies", "evict,local-search",
          "--time-limit", L, "--total-time-limit", f"{2 * limit:g}"], 2 * limit),
        ("approx-report --points 2 (3 strategies and a bound per budget)",
         ["approx-report", "--graph", path, "--points", "2", "--time-limit", L], 8 * limit),
    ]
    if labelled:
        runs.insert(2, ("solve --strategy griewank", ["solve", "--graph", path, "--budget",
                                                      "50%", "--strategy", "griewank",
                                                      "--time-limit", L], 2 * limit))
    return runs


def timed(remat: str, args: list[str]) -> tuple[float, int, str]:
    """Wall seconds, exit code and the first result's strategy, status and choice."""
    begin = time.monotonic()
    done = subprocess.run([remat, *args, "--quiet", "--json"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - begin
    answer = ""
    try:
        doc = json.loads(done.stdout)
        results = doc.get("results") or []
        if results and args[0] == "solve":
            row = results[0]
            answer = f"{row['status']}: {row.get('parameters') or row.get('note', '')}"[:70]
    except (ValueError, KeyError, TypeError):
        answer = done.stderr.strip().splitlines()[-1][:70] if done.stderr.strip() else ""
    return wall, done.returncode, answer


def start_make_load(build_folder: str) -> subprocess.Popen:
    """A `make -j2` of remat's core, rebuilt from clean in a loop, in a scratch folder."""
    subprocess.run(["cmake", "-S", ROOT, "-B", build_folder, "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, stdout=subprocess.DEVNULL)
    loop = (f"while true; do cmake --build {build_folder} -j 2 --clean-first "
            f"--target remat_core remat_strategies > /dev/null 2>&1; done")
    return subprocess.Popen(["bash", "-c", loop], start_new_session=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--limit-1e5", type=float, default=5.0)
    parser.add_argument("--limit-1e6", type=float, default=10.0)
    parser.add_argument("--sizes", default="1e5,1e6")
    parser.add_argument("--beside-make", action="store_true")
    parser.add_argument("--json", help="write the runs to this file too")
    options = parser.parse_args()
    remat = os.path.join(options.build, "src", "cli", "remat")
    sizes = options.sizes.split(",")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as folder:
        made = graphs(remat, folder, sizes)
        load = start_make_load(os.path.join(folder, "build")) if options.beside_make else None
        try:
            for name, path, nodes in made:
                limit = options.limit_1e6 if nodes >= 10 ** 6 else options.limit_1e5
                for label, args, promise in commands(path, limit, name.startswith("chain, lin")):
                    run = Run(name, nodes, f"{label} --time-limit {limit:g}", promise)
                    run.wall_s, run.exit_code, run.answer = timed(remat, args)
                    runs.append(run)
                    print(f"{name} ({nodes}): {run.command}: {run.wall_s:.2f} s "
                          f"(promise {promise:g} s), exit {run.exit_code}", file=sys.stderr)
            # maxbatch on a zoo model: --total-time-limit holds for building every batch's
            # graph too.
            limit = options.limit_1e5
            label = f"maxbatch --model resnet50 --total-time-limit {2 * limit:g}"
            run = Run("resnet50 (zoo)", 0, label, 2 * limit)
            run.wall_s, run.exit_code, run.answer = timed(
                remat, ["maxbatch", "--model", "resnet50", "--memory", "16GiB", "--strategies",
                        "checkpoint-all,local-search", "--time-limit", f"{limit:g}",
                        "--total-time-limit", f"{2 * limit:g}"])
            runs.append(run)
        finally:
            if load is not None:
                os.killpg(load.pid, 15)
                load.wait()
    loaded = options.beside_make
    bound = "1.25x + 2 s, beside a make -j2" if loaded else "1.10x + 1 s, nothing else running"
    print(f"\nMachine: {platform.machine()}, {os.cpu_count()} cores; "
          f"{time.strftime('%Y-%m-%d')}; within: {bound}\n")
    print("| graph | nodes | command | promise s | wall s | wall / promise | within | answer |")
    print("|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r.graph} | {r.nodes or '-'} | `{r.command}` | {r.promise_s:g} | "
              f"{r.wall_s:.2f} | {r.ratio():.2f} | {'yes' if r.within(loaded) else 'NO'} | "
              f"{r.answer.replace('|', '/')} |")
    failed = [r for r in runs if not r.within(loaded)]
    print(f"\n{len(runs) - len(failed)} of {len(runs)} runs within {bound}.")
    if options.json:
        with open(options.json, "w") as out:
            json.dump([r.__dict__ for r in runs], out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
