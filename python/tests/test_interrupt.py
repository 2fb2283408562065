"""Ctrl-C during a long C++ call (python/src/interruptible.cc): the call stops within about a
second with KeyboardInterrupt and leaves no CBC process behind.

Each case runs in a subprocess that is sent SIGINT, as a terminal's Ctrl-C would be, so that a
stray signal can never reach the pytest process itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import remat

# A seeded random layered DAG (300 nodes, 10 per layer, each reading 3 nodes of the 3 layers
# before it) at 80% of its no-remat peak: the optimal pipeline spends its whole 30 s limit on
# window MILPs in CBC's child process.
CHILD = textwrap.dedent("""
    import os, random, signal, sys, time
    import remat

    # Python installs its Ctrl-C handler only when SIGINT is not ignored at startup, and a
    # shell without job control starts background jobs with SIGINT ignored: install it here,
    # as an interactive program has it, whatever launched the tests.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    rng = random.Random(3)
    nodes, edges = [], set()
    for i in range(300):
        nodes.append(remat.Node(f"n{i}", remat.NodeKind.unlabeled, float(rng.randint(1, 100)),
                                rng.randint(1, 64) << 20))
        first = max(0, (i // 10 - 3) * 10)
        if i >= 10:
            for j in rng.sample(range(first, i // 10 * 10), 3):
                edges.add((j, i))
    graph = remat.Graph(nodes, sorted(edges))
    peak = remat.run_strategy("checkpoint-all", graph, 0).peak_bytes
    print("ready", flush=True)
    start = time.monotonic()
    try:
        if sys.argv[1] == "run_strategy":
            remat.run_strategy("optimal", graph, int(0.8 * peak), time_limit_s=30)
        else:
            remat.plan(graph, budget="80%", strategies="optimal", time_limit_s=30)
        print(f"returned after {time.monotonic() - start:.1f} s", flush=True)
    except KeyboardInterrupt:
        alive = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            state, parent = stat.rsplit(")", 1)[1].split()[:2]
            if int(parent) == os.getpid() and state not in "ZX":
                alive.append(pid)
        print(f"KeyboardInterrupt; children alive: {len(alive)}", flush=True)
""")


def interrupted_child(script: str, argument: str, delay_s: float) -> tuple[str, str, float]:
    """Runs ``script`` in a child Python, sends it SIGINT ``delay_s`` after it prints "ready",
    and returns its stdout, its stderr and the monotonic time the signal was sent. The child
    imports the package this test imported, whatever its working directory holds."""
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(remat.__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    child = subprocess.Popen([sys.executable, "-c", script, argument], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env,
                             cwd=os.path.dirname(__file__))
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        time.sleep(delay_s)
        sent = time.monotonic()
        os.kill(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return out, err, sent


@pytest.mark.parametrize("call", ["run_strategy", "plan"])
def test_ctrl_c_stops_a_long_solve(call):
    # The solve is under way after a second: start heuristics, bound, CBC.
    out, err, sent = interrupted_child(CHILD, call, 1.0)
    stopped_s = time.monotonic() - sent
    assert "KeyboardInterrupt; children alive: 0" in out, out + err
    # Generous: well under the 30 s limit that the call would otherwise run to (it takes
    # about 0.1 s; a loaded machine may take longer).
    assert stopped_s < 5, f"stopped {stopped_s:.1f} s after SIGINT"


# remat.torch.wrap and the backend plan inside torch.compile's call: Ctrl-C there ends planning
# as fast (the interrupt reaches Python within the C++ watcher's 50 ms tick, or at once in
# Python code) and leaves the user's model as it was: its parameters still Parameters, eager
# calls still working. The child prints when KeyboardInterrupt arrived (CLOCK_MONOTONIC is the
# same in both processes), so the interpreter's own exit time is not counted.
#
# The child says "ready" when planning starts, not before the call: tracing comes first and
# takes seconds on a loaded machine, and a signal that lands in torch's own tracing is not
# remat's to handle (torch can abort there, inside its autograd engine). With gap=0 planning
# runs for over a second (1.2-1.4 s measured), so the signal lands in it.
TORCH_CHILD = textwrap.dedent("""
    import signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import torch, remat, remat.planning, remat.torch

    planning = remat.planning.plan
    def announced(*args, **kwargs):
        print("ready", flush=True)
        return planning(*args, **kwargs)
    remat.planning.plan = announced

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(80)
                                  for m in (torch.nn.Linear(64, 64), torch.nn.Tanh())])
    x = torch.randn(32, 64)
    if sys.argv[1] == "wrap":
        planned = remat.torch.wrap(model, budget="25%", time_limit_s=120, gap=0)
    else:
        planned = torch.compile(model, dynamic=False, backend=remat.torch.backend(
            budget="25%", time_limit_s=120, gap=0, compiler="aot_eager"))
    try:
        planned(x).sum().backward()
        print("returned", flush=True)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt at {time.monotonic()!r}", flush=True)
    intact = all(type(p) is torch.nn.Parameter for p in model.parameters())
    with torch.no_grad():
        intact = intact and model(x).shape == (32, 64)
    print(f"model intact: {intact}", flush=True)
""")


@pytest.mark.parametrize("front_end", ["wrap", "backend"])
def test_ctrl_c_stops_planning_inside_torch_compile(front_end):
    out, err, sent = interrupted_child(TORCH_CHILD, front_end, 0.2)  # planning under way
    lines = out.splitlines()
    assert lines and lines[0].startswith("KeyboardInterrupt at "), out + err
    latency = float(lines[0].split()[-1]) - sent
    # docs/python.md promises about 0.1 s (measured 0.02-0.09 s); the margin is for a loaded
    # machine, not for the 2.6-4 s that planning under the backend used to take.
    assert latency < 1.0, f"KeyboardInterrupt {latency:.2f} s after SIGINT"
    assert "model intact: True" in out, out + err
