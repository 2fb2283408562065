"""How fast does Ctrl-C stop a compile under remat's backend? (docs/python.md, "Ctrl-C").

Each run starts a child Python that compiles a 200-layer MLP (``Linear(64, 64)`` + ``ReLU``)
with ``remat.torch.backend(budget="30%", strategy="optimal")`` and sends it SIGINT at a random
time in the first ``--window`` seconds of the compile (seeded). The script prints, per run,
the seconds from the signal to the child's KeyboardInterrupt (the child reads the same
monotonic clock) and to the child's exit, whether its parameters were unchanged, and then the
worst and the median of each. The exit includes the interpreter's own teardown of torch, which
remat does not control: ``--baseline`` prints that teardown alone, for a child that imports
torch, compiles nothing and exits.

Usage: .venv/bin/python scripts/ctrl_c_latency.py [--runs 20] [--window 10] [--seed 1]
       [--baseline]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import textwrap
import time

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, os.path.join(PYTHON_DIR, "tests"))

from test_interrupt import DEEP_CHILD  # noqa: E402  (the tests' child script)

# The child of the tests' deep-model case (python/tests/test_interrupt.py), which also says
# when it ends.
CHILD = DEEP_CHILD + 'print(f"end at {time.monotonic()!r}", flush=True)\n'

BASELINE = textwrap.dedent("""
    import time
    import torch, remat.torch
    print(f"end at {time.monotonic()!r}", flush=True)
""")


def child(script: str) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PYTHON_DIR, env.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def run(delay_s: float) -> tuple[float, float, bool, str]:
    """(seconds to KeyboardInterrupt or inf, seconds to exit, parameters unchanged, stderr)."""
    process = child(CHILD)
    assert process.stdout.readline().strip() == "ready", process.stderr.read()
    time.sleep(delay_s)
    sent = time.monotonic()
    os.kill(process.pid, signal.SIGINT)
    try:
        out, err = process.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    exited = time.monotonic() - sent
    interrupted = [float(line.split()[-1]) - sent for line in out.splitlines()
                   if line.startswith("KeyboardInterrupt at ")]
    return (interrupted[0] if interrupted else float("inf"), exited, "model intact: True" in out, err)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline", action="store_true")
    args = parser.parse_args()
    if args.baseline:
        teardowns = []
        for _ in range(args.runs):
            process = child(BASELINE)
            line = process.stdout.readline()
            ended = time.monotonic()
            process.wait()
            teardowns.append(time.monotonic() - ended)
            assert line.startswith("end at"), process.stderr.read()
        print(f"import torch, then exit: teardown worst {max(teardowns):.3f} s, median "
              f"{statistics.median(teardowns):.3f} s over {args.runs} runs")
        return
    rng = random.Random(args.seed)
    interrupts, exits, intact = [], [], []
    for i in range(args.runs):
        delay = rng.uniform(0, args.window)
        interrupt_s, exit_s, unchanged, err = run(delay)
        interrupts.append(interrupt_s)
        exits.append(exit_s)
        intact.append(unchanged)
        print(f"run {i:2d}: SIGINT {delay:5.2f} s into the compile: KeyboardInterrupt "
              f"{interrupt_s:.3f} s after it, exit {exit_s:.3f} s after it, parameters "
              f"{'unchanged' if unchanged else 'CHANGED'}", flush=True)
        if interrupt_s == float("inf"):
            print(err[-2000:], flush=True)
    print(f"KeyboardInterrupt: worst {max(interrupts):.3f} s, median "
          f"{statistics.median(interrupts):.3f} s; exit: worst {max(exits):.3f} s, median "
          f"{statistics.median(exits):.3f} s; parameters unchanged in {sum(intact)} of "
          f"{args.runs} runs")


if __name__ == "__main__":
    main()
