"""Ctrl-C while remat plans: a long C++ call (python/src/interruptible.cc) stops within about a
second with KeyboardInterrupt and leaves no CBC process behind, and planning under torch.compile
stops within half a second wherever the signal lands, also where Python swallowed the
KeyboardInterrupt in a callback (remat/interrupt.py's flag).

Each case with a signal runs in a subprocess that is sent SIGINT (or sends it to itself), as a
terminal's Ctrl-C would be, so that a stray signal can never reach the pytest process itself;
the cases in this process set remat's flag directly.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Optional

import pytest

import remat
from remat import interrupt

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


def interrupted_child(script: str, argument: str,
                      delay_s: Optional[float]) -> tuple[str, str, float]:
    """Runs ``script`` in a child Python, sends it SIGINT ``delay_s`` after it prints "ready"
    (None: no signal from here), and returns its stdout, its stderr and the monotonic time the
    signal was sent. The child imports the package this test imported, whatever its working
    directory holds."""
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(remat.__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    child = subprocess.Popen([sys.executable, "-c", script, argument], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env,
                             cwd=os.path.dirname(__file__))
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
        sent = time.monotonic()
        if delay_s is not None:
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


# The model and front end of the two children below: an 80-layer MLP under `wrap` or under the
# backend (argv[1]), at a budget low enough that planning runs for over a second.
FRONT_END = """\
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(80)
                                  for m in (torch.nn.Linear(64, 64), torch.nn.Tanh())])
    x = torch.randn(32, 64)
    if sys.argv[1] == "wrap":
        planned = remat.torch.wrap(model, budget="25%", time_limit_s=120, gap=0)
    else:
        planned = torch.compile(model, dynamic=False, backend=remat.torch.backend(
            budget="25%", time_limit_s=120, gap=0, compiler="aot_eager"))
"""


def with_front_end(script: str) -> str:
    return script.replace("{front_end}", FRONT_END)


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
TORCH_CHILD = textwrap.dedent(with_front_end("""
    import signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import torch, remat, remat.planning, remat.torch

    planning = remat.planning.plan
    def announced(*args, **kwargs):
        print("ready", flush=True)
        return planning(*args, **kwargs)
    remat.planning.plan = announced

{front_end}    try:
        planned(x).sum().backward()
        print("returned", flush=True)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt at {time.monotonic()!r}", flush=True)
    intact = all(type(p) is torch.nn.Parameter for p in model.parameters())
    with torch.no_grad():
        intact = intact and model(x).shape == (32, 64)
    print(f"model intact: {intact}", flush=True)
"""))


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


# Python swallows a KeyboardInterrupt raised inside a weakref callback ("Exception ignored
# in ..."), and torch runs many while it traces: measured on a 200-layer MLP, 3 of 4 Ctrl-Cs
# went that way and planning went on for minutes. Here a callback of the same kind gets the
# signal at once (it sends SIGINT to its own process and runs on), when planning starts: remat
# records the interrupt and raises it again. Without that, planning runs to its end and the
# step returns.
SWALLOWED_CHILD = textwrap.dedent(with_front_end("""
    import os, signal, sys, time, weakref
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import torch, remat, remat.planning, remat.torch

    class Thing:
        pass

    def swallowing(ref):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100000):  # the handler runs here: Python reports it as ignored
            pass

    sent = []
    planning = remat.planning.plan
    def swallowed_then_planned(*args, **kwargs):
        if not sent:
            thing = Thing()
            ref = weakref.ref(thing, swallowing)
            sent.append(time.monotonic())
            del thing
        return planning(*args, **kwargs)
    remat.planning.plan = swallowed_then_planned

{front_end}    print("ready", flush=True)
    try:
        planned(x).sum().backward()
        print("returned", flush=True)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - sent[0]:.3f} s", flush=True)
    intact = all(type(p) is torch.nn.Parameter and p.grad is None for p in model.parameters())
    print(f"model intact: {intact}", flush=True)
    print(f"handler back: {signal.getsignal(signal.SIGINT) is signal.default_int_handler}, "
          f"hook back: {sys.unraisablehook is sys.__unraisablehook__}", flush=True)
    planned(x).sum().backward()  # the next call plans and trains as if nothing had happened
    print(f"planned again: {all(p.grad is not None for p in model.parameters())}", flush=True)
"""))


@pytest.mark.parametrize("front_end", ["wrap", "backend"])
def test_ctrl_c_that_python_swallowed_in_a_callback_still_stops_planning(front_end):
    out, err, _ = interrupted_child(SWALLOWED_CHILD, front_end, None)  # the child signals
    lines = out.splitlines()
    assert lines and lines[0].startswith("KeyboardInterrupt after "), out + err
    latency = float(lines[0].split()[-2])
    assert latency < 0.5, f"KeyboardInterrupt {latency:.2f} s after SIGINT"
    assert "model intact: True" in out, out + err
    assert "handler back: True, hook back: True" in out, out + err
    assert "planned again: True" in out, out + err


# The case: a 200-layer MLP under the backend at 30% with `optimal`, SIGINT at varied
# times in the compile: 1.5 s in, Dynamo traces the model; 3 s in, AOTAutograd traces the joint
# graph (remat's backend has the region); 6 s in, torch's min-cut partitions or remat plans
# (measured on a 2-core machine; all take longer under load). KeyboardInterrupt must come
# within half a second wherever the signal lands, with the parameters untouched. No signal
# is sent in Dynamo's first half second, before remat's backend is called: torch itself
# aborts there now and then ("terminate called after throwing an instance of
# 'python_error'"), under plain torch.compile too (2 of 162 signals 0.2-0.4 s in, measured).
DEEP_CHILD = textwrap.dedent("""
    import signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import torch, remat.torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(200)
                                  for m in (torch.nn.Linear(64, 64), torch.nn.ReLU())])
    before = [p.detach().clone() for p in model.parameters()]
    compiled = torch.compile(model, dynamic=False, backend=remat.torch.backend(
        budget="30%", strategy="optimal"))
    print("ready", flush=True)
    try:
        compiled(torch.randn(32, 64)).sum().backward()
        print("returned", flush=True)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt at {time.monotonic()!r}", flush=True)
    intact = all(type(p) is torch.nn.Parameter and p.grad is None and torch.equal(p, b)
                 for p, b in zip(model.parameters(), before))
    print(f"model intact: {intact}", flush=True)
""")


@pytest.mark.parametrize("delay_s", [1.5, 3.0, 6.0])
def test_ctrl_c_stops_a_deep_models_compile_wherever_it_lands(delay_s):
    out, err, sent = interrupted_child(DEEP_CHILD, "", delay_s)
    lines = out.splitlines()
    assert lines and lines[0].startswith("KeyboardInterrupt at "), out + err
    latency = float(lines[0].split()[-1]) - sent
    assert latency < 0.5, f"KeyboardInterrupt {latency:.2f} s after SIGINT"
    assert "model intact: True" in out, out + err


def layered_dag(layers: int = 30) -> remat.Graph:
    """CHILD's seeded random DAG: 10 nodes a layer, each reading 3 of the 3 layers before."""
    rng = random.Random(3)
    nodes, edges = [], set()
    for i in range(10 * layers):
        nodes.append(remat.Node(f"n{i}", remat.NodeKind.unlabeled, float(rng.randint(1, 100)),
                                rng.randint(1, 64) << 20))
        if i >= 10:
            for j in rng.sample(range(max(0, (i // 10 - 3) * 10), i // 10 * 10), 3):
                edges.add((j, i))
    return remat.Graph(nodes, sorted(edges))


def test_remats_flag_stops_the_cpp_calls_before_they_start_and_while_they_run():
    # The flag is what remat's handler records; here it is set directly, as after an
    # interrupt that Python swallowed, without a signal to the test process.
    graph = layered_dag()
    budget = int(0.8 * remat.run_strategy("checkpoint-all", graph, 0).peak_bytes)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with interrupt.planning():
            remat._core._set_interrupt_requested(True)
            remat.run_strategy("optimal", graph, budget, time_limit_s=30)
    assert time.monotonic() - start < 1  # never started
    assert not remat._core._interrupt_requested()  # cleared when the planning ended
    # Set while optimal runs (its 30 s limit): seen within the watcher's 50 ms tick.
    timer = threading.Timer(0.3, remat._core._set_interrupt_requested, (True,))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        with interrupt.planning():
            remat.run_strategy("optimal", graph, budget, time_limit_s=30)
    timer.join()
    assert time.monotonic() - start < 5, "not stopped within 5 s of the flag"
    # The next planning starts with the flag clear and runs to its end.
    with interrupt.planning():
        assert remat.run_strategy("checkpoint-all", graph, budget, time_limit_s=5).found


def test_planning_puts_the_handler_back_and_turns_errors_of_an_interrupt_into_it():
    handler, hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    with pytest.raises(KeyboardInterrupt):  # an error a `finally` raised in its place
        with interrupt.planning():
            assert signal.getsignal(signal.SIGINT) is not handler
            remat._core._set_interrupt_requested(True)
            raise NameError("a variable the interrupt left unset")
    with pytest.raises(KeyboardInterrupt):  # swallowed: raised when planning ends
        with interrupt.planning():
            remat._core._set_interrupt_requested(True)
    with pytest.raises(KeyError):  # without an interrupt, errors are themselves
        with interrupt.planning():
            raise KeyError("k")
    assert signal.getsignal(signal.SIGINT) is handler and sys.unraisablehook is hook
    assert not remat._core._interrupt_requested()


def test_another_threads_planning_is_not_stopped_by_the_main_threads_flag():
    graph = layered_dag(5)
    found = []

    def plan():
        with interrupt.planning():
            interrupt.check()
            found.append(remat.run_strategy("checkpoint-all", graph, 0).found)

    remat._core._set_interrupt_requested(True)
    try:
        worker = threading.Thread(target=plan)
        worker.start()
        worker.join()
    finally:
        remat._core._set_interrupt_requested(False)
    assert found == [True]
