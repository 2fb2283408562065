"""remat's torch.compile backend against plain torch.compile and PyTorch's own activation
memory budget, under Inductor (docs/BENCHMARKS.md, "remat inside torch.compile").

Three models written for the trial (a ViT with scaled dot-product attention, a U-Net with batch
norm, transposed convolution and bilinear upsampling, a GRU model with torch.where, a custom
autograd.Function and dropout), each at 100/70/50/30% of its activation peak:

- plain torch.compile (Inductor, PyTorch's min-cut partitioner at its default budget);
- remat's backend (``remat.torch.backend(budget=f, strategy=...)``, Inductor);
- the knob (``torch._functorch.config.activation_memory_budget = f``, Inductor).

Measured the same way for all: peak = the largest net CPU allocation during one training step
(zero_grad, forward, loss, backward) from the profiler's memory events, after a warm-up step,
and whether it is reached in the forward (with the loss) or in the backward (the step marks its
backward pass); remat's measured peak over its asked budget, the parameters' gradients
subtracted where the step peaks in the backward (the plan does not count them; in the forward
none exists yet);
step time = the median of N steps, the contenders alternating step by step so that drift of a
shared machine falls on all alike. Gradients: remat's compiled path and the knob's against plain
torch.compile, the same seed before each (largest absolute difference; the tables give it as a
fraction of plain's largest gradient, and call it wrong above WRONG_GRADIENT: the knob's
backward may draw another dropout mask than its forward applied), and the eager path
(``remat.torch.wrap``) against ``loss.backward()`` (bit-identical or not). Ratios are against plain
torch.compile of the same run. The capture and plan time of a ResNet-18-sized model (batch 32,
224x224) is the last row.

Usage: .venv/bin/python scripts/bench_compiled.py [--quick] [--out results.json]
           [--device cpu|cuda] [--steps 5] [--strategy local-search] [--fusion on|off]
           [--dropout P] [--rounds R]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time

# c10 logs once per process that the profiler saw a block freed which was allocated before it
# started (the gradients of the step before the measured window): the measurement expects it
# (python/tests/measure.py) and the line says nothing to the reader. Read when torch loads.
os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
sys.path.insert(0, HERE)

import demo_warnings  # noqa: E402  (one line per warning with --summary)
import remat  # noqa: E402
import remat.torch  # noqa: E402
from measure import device_peak_bytes as step_peak_bytes  # noqa: E402
from measure import BACKWARD, peak_and_phase_of  # noqa: E402
from export_captures import GruModel as CaptureGru, UNet, Vit  # noqa: E402  (the captures')

import networks  # noqa: E402  (the ResNet-18-style network of the tests)


class LeakyClip(torch.autograd.Function):
    """A custom autograd.Function: leaky ReLU whose gradient is clipped to [-1, 1]."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, x, 0.1 * x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, grad, 0.1 * grad).clamp(-1, 1)


class GruModel(CaptureGru):
    """The captures' GRU model, its leaky ReLU through a custom autograd.Function."""

    def forward(self, tokens):
        y, _ = self.gru(self.embed(tokens))
        y = torch.where(y.abs() > 1e-3, LeakyClip.apply(y), y)
        return self.head(self.drop(y).mean(dim=1))


def language_models(quick: bool) -> dict:
    """transformers' GPT-2 and Llama (python/tests/hf_models.py), trained on their own loss
    (``loss_fn`` None: the module returns the loss), 4 layers (2 with --quick), the demo's
    small GPT-2 (``lm``, 2 layers), and both with real vocabularies, where the head and its
    loss set the floor (``gpt2-50k``: 6 layers, 50257 entries; ``llama-32k``: 4 layers, 32000),
    as does Qwen2-MoE's (``qwen2-moe-32k``: 2 layers of 8 experts, top-2, 32000 entries)."""
    import hf_models

    size = (dict(layers=2, width=64, heads=4, batch=4, seq=64) if quick else
            dict(layers=4, width=128, heads=4, batch=8, seq=128))
    return {"gpt2": lambda: hf_models.gpt2(**size), "llama": lambda: hf_models.llama(**size),
            "lm": lambda: hf_models.gpt2(layers=2, width=64, heads=4, batch=8, seq=64),
            # Real vocabularies, where the head and its loss set the floor (--quick: 2 layers).
            "gpt2-50k": lambda: hf_models.gpt2(layers=2 if quick else 6, width=256, heads=4,
                                               batch=8, seq=128, vocab=50257),
            "llama-32k": lambda: hf_models.llama(layers=2 if quick else 4, width=256, heads=4,
                                                 batch=4, seq=128, vocab=32000),
            "qwen2-moe-32k": lambda: hf_models.qwen2_moe(layers=2, width=64, heads=4, batch=4,
                                                         seq=128, vocab=32000, experts=8,
                                                         top_k=2, expert_width=64)}


def models(quick: bool, device: torch.device, names=("vit", "unet", "gru")):
    """The models named, sized for steps of 0.05-2 s on two cores (smaller with --quick)."""
    rows = {}
    for name, build in language_models(quick).items():
        if name in names:
            module, inputs = build()
            rows[name] = (module, None, list(inputs))
    torch.manual_seed(0)
    ce = nn.CrossEntropyLoss()
    if quick:
        vit, vit_batch, unet, unet_batch, gru, gru_batch = (dict(dim=64, depth=2), 8, 8, 2,
                                                            64, 8)
    else:
        vit, vit_batch, unet, unet_batch, gru, gru_batch = (dict(dim=128, depth=4), 32, 16, 8,
                                                            128, 256)
    rows.update({
        "vit": (Vit(image=32, **vit), ce,
                [torch.randn(vit_batch, 3, 32, 32), torch.randint(0, 10, (vit_batch,))]),
        "unet": (UNet(width=unet), lambda y, t: F.mse_loss(y, t),
                 [torch.randn(unet_batch, 3, 64, 64), torch.randn(unet_batch, 3, 64, 64)]),
        "gru": (GruModel(dim=gru), ce,
                [torch.randint(0, 64, (gru_batch, 16)), torch.randint(0, 8, (gru_batch,))]),
    })
    return {name: (model.to(device), loss, [t.to(device) for t in inputs])
            for name, (model, loss, inputs) in rows.items() if name in names}


# With --summary the rows' JSON lines are not printed, only the summary tables.
QUIET = False

# A gradient further from plain torch.compile's than this fraction of its largest element is
# not rounding: float32 reorderings move the benchmark's gradients by 1e-5 of it at most.
WRONG_GRADIENT = 1e-3


def report(row: dict) -> None:
    if not QUIET:
        print(json.dumps(row), flush=True)


def run_step(model, loss_fn, inputs):
    def run():
        model.zero_grad(set_to_none=True)
        loss = model(*inputs) if loss_fn is None else loss_fn(model(inputs[0]), *inputs[1:])
        with torch.profiler.record_function(BACKWARD):  # where the peak is (step_peak)
            loss.backward()
    return run


def step_peak(fn, device: torch.device) -> tuple[int, str]:
    """The step's measured peak, and whether it is in the "forward" (forward and loss) or the
    "backward" ("" on a GPU, measured by the allocator's counters)."""
    if device.type == "cuda":
        return step_peak_bytes(fn, device), ""
    return peak_and_phase_of(fn)


def alternating_times(fns: dict, steps: int, device: torch.device,
                      rounds: int = 1) -> tuple[dict, dict]:
    """Seconds per step of each fn after one warm-up step each, the fns taking turns step by
    step, in ``rounds`` rounds of ``steps`` steps: the median over all steps, and each round's
    median."""
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    for fn in fns.values():
        fn()
    samples = {k: [[] for _ in range(rounds)] for k in fns}
    for r in range(rounds):
        for _ in range(steps):
            for k, fn in fns.items():
                sync()
                start = time.perf_counter()
                fn()
                sync()
                samples[k][r].append(time.perf_counter() - start)
    return ({k: statistics.median([t for round_ in v for t in round_]) for k, v in samples.items()},
            {k: [statistics.median(round_) for round_ in v] for k, v in samples.items()})


def grads(model):
    return [p.grad.detach().clone() for p in model.parameters()]


def max_difference(a, b) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


def relative_difference(a, reference) -> float:
    """max |a - reference| over all parameters' gradients, over max |reference|: the largest
    difference as a fraction of the largest reference gradient (0 where both are all zero)."""
    largest = max(float(g.abs().max()) for g in reference)
    difference = max_difference(a, reference)
    return difference / largest if largest > 0 else (0.0 if difference == 0 else float("inf"))


def regions_over(plans) -> int:
    """How many regions' plans peak above the budget asked of them (a least-peak fallback, or a
    loaded schedule over it; a BudgetWarning says so as each is planned)."""
    return sum(not p.within_budget for p in plans)


def budget_met(row: dict) -> str:
    """"yes" where every region's plan is within its budget, else "no (k of n regions over)";
    "-" without remat's figures (its error, or a row from before they were recorded)."""
    if "remat_regions_over" not in row:
        return "-"
    over, regions = row["remat_regions_over"], row["remat_regions"]
    return "yes" if over == 0 else f"no ({over} of {regions} region{'s' * (regions != 1)} over)"


def compiled(model, backend=None):
    """A copy of ``model`` under torch.compile. Dynamo's caches are not reset: each copy keeps
    its compiled code (the recompile limits are raised in main), so no contender compiles
    again while the others are timed. (Resetting them, as this script did before, made plain
    torch.compile recompile inside the knob's configuration and remat plan again during the
    timed steps.)"""
    net = copy.deepcopy(model)
    if backend is None:
        return net, torch.compile(net, dynamic=False)
    return net, torch.compile(net, backend=backend, dynamic=False)


def knob_backend(fraction: float):
    """Inductor with ``activation_memory_budget = fraction`` while it compiles. A backend of
    its own: Dynamo shares compiled code between copies of a model that use one backend (it
    does not guard on the module), so the knob under plain's backend would run plain's code.
    The compiled-graph caches are off, since they do not key on the knob."""
    import torch._functorch.config as functorch_config
    from torch._inductor import config as inductor_config
    from torch._inductor.compile_fx import compile_fx

    def backend(gm, example_inputs):
        with functorch_config.patch(activation_memory_budget=fraction,
                                    enable_autograd_cache=False), \
                inductor_config.patch(fx_graph_cache=False):
            return compile_fx(gm, example_inputs)
    return backend


def bench_model(name, model, loss_fn, inputs, fractions, args, device):
    rows = []
    model.train()
    torch.manual_seed(1)
    plain_net, plain = compiled(model)
    start = time.perf_counter()
    run_step(plain, loss_fn, inputs)()
    plain_compile_s = time.perf_counter() - start
    plain_peak, plain_phase = step_peak(run_step(plain, loss_fn, inputs), device)
    torch.manual_seed(2)
    run_step(plain, loss_fn, inputs)()
    plain_grads = grads(plain_net)
    largest = max(float(g.abs().max()) for g in plain_grads)

    if not args.no_eager_path:
        rows.append(eager_path_row(name, model, loss_fn, inputs, args))
    rows += [budget_row(name, model, loss_fn, inputs, fraction, args, device, plain,
                        (plain_peak, plain_phase),
                        plain_compile_s, plain_grads) for fraction in fractions]
    for row in rows:
        if "fraction" in row:
            row["plain_grad_max"] = largest
    return rows


def eager_path_row(name, model, loss_fn, inputs, args) -> dict:
    """The eager path (``remat.torch.wrap`` at 50%): bit-identical to loss.backward()?"""
    eager = copy.deepcopy(model)
    wrapped_model = copy.deepcopy(model)
    torch.manual_seed(3)
    run_step(eager, loss_fn, inputs)()
    eager_identical, eager_note = None, ""
    for workspace in (True, False):  # without the workspace bound where it leaves no schedule
        try:
            wrapped = remat.torch.wrap(copy.deepcopy(wrapped_model), budget="50%",
                                       strategy=args.strategy, time_limit_s=args.time_limit,
                                       workspace=workspace)
            torch.manual_seed(3)
            run_step(wrapped, loss_fn, inputs)()
            eager_identical = all(torch.equal(a, b) for a, b in zip(grads(eager),
                                                                    grads(wrapped.module)))
            eager_note = str(wrapped.plan) + ("" if workspace else " (workspace not counted)")
            break
        except remat.Error as error:
            eager_note += f"{type(error).__name__}: {error}; "
    row = {"model": name, "row": "eager path", "bit_identical": eager_identical,
           "plan": eager_note}
    report(row)
    return row


def budget_row(name, model, loss_fn, inputs, fraction, args, device, plain, plain_measured,
               plain_compile_s, plain_grads) -> dict:
    """remat's backend and the knob at one fraction, against plain torch.compile (whose
    measured peak and its phase are ``plain_measured``)."""
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    row = {"model": name, "fraction": fraction, "plain_peak_bytes": plain_measured[0],
           "plain_peak_phase": plain_measured[1],
           "plain_compile_s": plain_compile_s, "gradient_bytes": grad_bytes}
    ours = None
    # The plan counts CPU convolutions' workspace (a bound: docs/python.md); where that
    # leaves no schedule at the budget, the plan without it is measured too.
    for workspace in (True, False):
        backend = remat.torch.backend(budget=f"{100 * fraction:g}%",
                                      strategy=args.strategy, time_limit_s=args.time_limit,
                                      workspace=workspace, fusion=args.fusion == "on",
                                      inductor_config=json.loads(args.inductor_config or "{}"),
                                      flops_per_byte=(args.flops_per_byte
                                                      if args.flops_per_byte == "machine"
                                                      else float(args.flops_per_byte)))
        remat_net, ours = compiled(model, backend)
        try:
            start = time.perf_counter()
            torch.manual_seed(2)
            run_step(ours, loss_fn, inputs)()
            row["remat_compile_s"] = time.perf_counter() - start
            row["remat_workspace_counted"] = workspace
            break
        except Exception as error:  # noqa: BLE001: an infeasible budget is a result here
            key = "remat_error" if workspace else "remat_error_without_workspace"
            lines = [line for line in str(error).splitlines() if "Error:" in line]
            row[key] = lines[0] if lines else f"{type(error).__name__}: {error}"
            ours = None
    if ours is not None:
        plans = backend.plans
        row["remat_regions"] = len(plans)
        row["remat_plan"] = [str(p.plan) for p in plans]
        row["remat_torch_partitions"] = [list(map(list, p.torch_partitions)) for p in plans]
        row["remat_tightened"] = [p.tightened for p in plans]
        row["remat_attempts"] = [list(map(list, p.attempts)) for p in plans]
        row["remat_fusion"] = args.fusion
        row["remat_flops_per_byte"] = args.flops_per_byte
        row["remat_nodes"] = sum(len(p.graph) for p in plans)
        row["remat_budget_bytes"] = sum(p.plan.budget_bytes for p in plans)
        row["remat_predicted_peak_bytes"] = sum(p.plan.predicted_peak_bytes for p in plans)
        row["remat_seconds_planning"] = sum(p.seconds for p in plans)
        row["remat_workspace_bytes"] = sum(p.workspace_bytes for p in plans)
        row["remat_regions_over"] = regions_over(plans)
        row["remat_chunks"] = [p.chunks for p in plans]
        row["remat_split_attempts"] = [list(map(list, p.split_attempts)) for p in plans]
        row["remat_grad_max_difference"] = max_difference(grads(remat_net), plain_grads)
        row["remat_grad_relative"] = relative_difference(grads(remat_net), plain_grads)
        row["remat_peak_bytes"], row["remat_peak_phase"] = step_peak(
            run_step(ours, loss_fn, inputs), device)
        # Inductor's estimate of each region's compiled graphs (the backward is compiled at the
        # first step), over the regions as the prediction is.
        estimates = [p.inductor_peak for p in plans]
        if estimates and None not in estimates:
            row["remat_inductor_peak_bytes"] = sum(estimates)
    knob = None
    if fraction < 1:
        knob_net, knob = compiled(model, knob_backend(fraction))
        torch.manual_seed(2)
        run_step(knob, loss_fn, inputs)()
        row["knob_grad_max_difference"] = max_difference(grads(knob_net), plain_grads)
        row["knob_grad_relative"] = relative_difference(grads(knob_net), plain_grads)
        row["knob_peak_bytes"], row["knob_peak_phase"] = step_peak(
            run_step(knob, loss_fn, inputs), device)
    fns = {"plain": run_step(plain, loss_fn, inputs)}
    if ours is not None:
        fns["remat"] = run_step(ours, loss_fn, inputs)
    if knob is not None:
        fns["knob"] = run_step(knob, loss_fn, inputs)
    # All are compiled: Dynamo does not guard on the knob's setting, so none compiles again.
    times, by_round = alternating_times(fns, args.steps, device, args.rounds)
    for k, v in times.items():
        row[f"{k}_step_s"] = v
        row[f"{k}_round_step_s"] = by_round[k]
    report(row)
    return row


def resnet18_planning(args) -> dict:
    """Capture and plan of a ResNet-18-sized model, batch 32, 224x224, by the eager path: the
    first call traces (AOTAutograd), plans and runs one forward; a second call's forward time
    is taken off, so what remains is capture and plan."""
    model, loss_fn, (x, y) = networks.resnet(batch=32, image=224, blocks=(2, 2, 2, 2),
                                             width=64)
    wrapped = remat.torch.wrap(model, budget="50%", strategy="local-search",
                               time_limit_s=args.time_limit)
    start = time.perf_counter()
    out = wrapped(x)
    first_s = time.perf_counter() - start
    del out
    start = time.perf_counter()
    out = wrapped(x)
    forward_s = time.perf_counter() - start
    del out
    region = wrapped.plans[0]
    return {"model": "resnet18 batch 32 224x224", "row": "capture and plan",
            "capture_and_plan_s": first_s - forward_s, "plan_s": region.seconds,
            "forward_s": forward_s, "nodes": region.plan.nodes, "plan": str(region.plan)}


def mb(n) -> str:
    return "-" if n is None else f"{n / 1e6:.2f}"


def _attempts(row: dict) -> str:
    """How many times each region was planned and compiled, where more than once."""
    counts = [len(a) for a in row.get("remat_attempts", [])]
    return f", attempts {'+'.join(map(str, counts))}" if any(c > 1 for c in counts) else ""


def over_budget(row: dict) -> float:
    """remat's measured peak over the budget it was asked (its first attempt's), the
    parameters' gradients subtracted unless the step peaks in the forward, where none exists
    yet (the plan does not count them; on a GPU, where the phase is not measured, they are
    subtracted as before)."""
    attempts = row["remat_attempts"]
    asked = (sum(a[0][0] for a in attempts) if attempts and all(attempts) else
             row["remat_budget_bytes"])
    peak = row["remat_peak_bytes"]
    if row.get("remat_peak_phase") != "forward":
        peak -= row["gradient_bytes"]
    return peak / asked


def print_tables(path: str) -> None:
    """The JSON of a run as the markdown tables of docs/BENCHMARKS.md."""
    with open(path) as f:
        rows = json.load(f)["rows"]
    print("| model | fraction | remat budget (+ workspace) MB | remat predicted MB (Inductor's "
          "estimate) | remat measured MB (x plain), where | x budget | budget met (plan) | "
          "knob measured MB (x plain) | remat step (x plain) | knob step (x plain) | remat "
          "compile s (plan s) | max grad diff remat / knob (x plain's largest) | remat plan "
          "(nodes) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "fraction" not in r:
            continue
        plain_peak, plain_s = r["plain_peak_bytes"], r["plain_step_s"]
        if "remat_peak_bytes" in r:
            counted = "" if r.get("remat_workspace_counted") else " (not counted)"
            remat = (f"{mb(r['remat_budget_bytes'])} (+{mb(r['remat_workspace_bytes'])}"
                     f"{counted})", f"{mb(r['remat_predicted_peak_bytes'])} "
                     f"({mb(r.get('remat_inductor_peak_bytes'))})",
                     f"{mb(r['remat_peak_bytes'])} ({r['remat_peak_bytes'] / plain_peak:.2f}x)"
                     + (f", {r['remat_peak_phase']}" if r.get("remat_peak_phase") else ""),
                     f"{r['remat_step_s'] * 1e3:.1f} ms ({r['remat_step_s'] / plain_s:.2f}x)",
                     f"{r['remat_compile_s']:.1f} ({r['remat_seconds_planning']:.1f})",
                     _grad_difference(r, "remat"),
                     "; ".join(p.split(":")[0] for p in r["remat_plan"]) +
                     f" ({r.get('remat_nodes', '?')})" + _attempts(r))
        else:
            why = r.get("remat_error_without_workspace") or r.get("remat_error", "")
            remat = (f"- ({why[:90]})", "-", "-", "-", "-", "-", "-")
        over = f"{over_budget(r):.3f}x" if "remat_peak_bytes" in r else "-"
        knob = ("-", "-")
        if "knob_peak_bytes" in r:
            knob = (f"{mb(r['knob_peak_bytes'])} ({r['knob_peak_bytes'] / plain_peak:.2f}x)",
                    f"{r['knob_step_s'] * 1e3:.1f} ms ({r['knob_step_s'] / plain_s:.2f}x)"
                    + _round_ratios(r))
            remat = (*remat[:5], f"{remat[5]} / {_grad_difference(r, 'knob')}", remat[6])
        print(f"| {r['model']} | {r['fraction']:g} | {remat[0]} | {remat[1]} | {remat[2]} | "
              f"{over} | {budget_met(r)} | {knob[0]} | {remat[3]} | {knob[1]} | {remat[4]} | "
              f"{remat[5]} | {remat[6]} |")
    print()
    for r in rows:
        if r.get("row") == "eager path":
            print(f"- {r['model']}, eager path (wrap, 50%): bit-identical to loss.backward(): "
                  f"{r['bit_identical']} ({r['plan']})")
        elif r.get("row") == "capture and plan":
            print(f"- {r['model']}: capture and plan {r['capture_and_plan_s']:.1f} s (plan "
                  f"{r['plan_s']:.1f} s, {r['nodes']} nodes): {r['plan']}")
    base = {r["model"]: (r["plain_peak_bytes"], r["plain_step_s"], r["plain_compile_s"])
            for r in rows if "fraction" in r}
    for model, (peak, step_s, compile_s) in base.items():
        print(f"- {model}: plain torch.compile peaks at {mb(peak)} MB, {step_s * 1e3:.1f} ms "
              f"per step (first step with compilation {compile_s:.1f} s)")


def _round_ratios(row: dict) -> str:
    """remat's step over the knob's in each round (--rounds), lowest to highest; "" with one
    round or no remat."""
    remat, knob = row.get("remat_round_step_s", []), row.get("knob_round_step_s", [])
    if len(remat) < 2 or len(remat) != len(knob):
        return ""
    ratios = sorted(a / b for a, b in zip(remat, knob))
    return f"; remat / knob by round {ratios[0]:.2f}-{ratios[-1]:.2f}x"


def _grad_difference(row: dict, who: str) -> str:
    """``who``'s largest gradient difference from plain torch.compile, as a fraction of
    plain's largest gradient where the row has it (absolute in runs before it did); marked
    **wrong** above WRONG_GRADIENT."""
    difference = row[f"{who}_grad_max_difference"]
    if "plain_grad_max" not in row:
        return f"{difference:.1e}"
    relative = difference / row["plain_grad_max"]
    return f"**{relative:.1e}, wrong**" if relative > WRONG_GRADIENT else f"{relative:.1e}"


def print_summary(rows: list) -> None:
    """Per model: plain torch.compile, then the knob and remat's backend at each fraction:
    measured peak, step time after warm-up (median of --steps alternating steps), the largest
    gradient difference from plain torch.compile as a fraction of plain's largest gradient, and
    for remat whether every region's plan is within its budget."""
    for model in dict.fromkeys(r["model"] for r in rows if "fraction" in r):
        own = [r for r in rows if r["model"] == model and "fraction" in r]
        peak, step_s = own[0]["plain_peak_bytes"], own[0]["plain_step_s"]
        print(f"\n{model}: one training step (forward, loss, backward)")
        print(f"{'':28} {'peak MB':>14} {'step ms':>16} {'grad diff':>10}  budget met")
        print(f"{'plain torch.compile':28} {mb(peak):>14} {step_s * 1e3:>16.1f} {'-':>10}  -")
        for r in own:
            for who, label in (("knob", "activation_memory_budget"), ("remat", "remat")):
                if f"{who}_peak_bytes" not in r:
                    if who == "remat":
                        why = r.get("remat_error_without_workspace") or r.get("remat_error", "")
                        print(f"{'remat ' + format(r['fraction'], 'g'):28} no plan: {why[:80]}")
                    continue
                p, t = r[f"{who}_peak_bytes"], r[f"{who}_step_s"]
                name = f"{label} {r['fraction']:g}"
                met = budget_met(r) if who == "remat" else "-"
                print(f"{name:28} "
                      f"{f'{mb(p)} ({p / peak:.2f}x)':>14} "
                      f"{f'{t * 1e3:.1f} ({t / step_s:.2f}x)':>16} "
                      f"{_relative(r, who):>10}  {met}")
        print("peak: the largest net allocation of a step (the profiler's memory events on a CPU)\n"
              "grad diff: max |g - g_plain| / max |g_plain| over all parameters\n"
              "budget met: every compiled region's plan within its budget (remat's prediction)")


def _relative(row: dict, who: str) -> str:
    """``who``'s gradient difference relative to plain's largest gradient (computed from the
    absolute one in rows from before the relative one was recorded)."""
    relative = row.get(f"{who}_grad_relative")
    if relative is None and row.get("plain_grad_max"):
        relative = row[f"{who}_grad_max_difference"] / row["plain_grad_max"]
    return "-" if relative is None else f"{relative:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="", help="print a results JSON as markdown")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--out", default="", help="write every row as JSON here")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of --steps alternating steps: the tables give remat's "
                             "step over the knob's in each round's medians, lowest to highest")
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--strategy", default="local-search")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--inductor-config", default="",
                        help="remat's inductor_config=, as JSON (e.g. "
                             "'{\"score_fusion_memory_threshold\": 1000000000000}')")
    parser.add_argument("--flops-per-byte", default="1",
                        help="remat's weight of a byte moved: a number or 'machine'")
    parser.add_argument("--fusion", choices=("on", "off"), default="on",
                        help="remat plans Inductor's fused graph (the default) or every "
                             "operation of the joint graph")
    parser.add_argument("--models", default="vit,unet,gru")
    parser.add_argument("--dropout", type=float, default=None,
                        help="the probability of every nn.Dropout of the models (the GRU's "
                             "is 0.1)")
    parser.add_argument("--fractions", default="1,0.7,0.5,0.3")
    parser.add_argument("--skip-resnet", action="store_true")
    parser.add_argument("--no-eager-path", action="store_true",
                        help="skip the eager path's row (wrap at 50%%)")
    parser.add_argument("--summary", action="store_true",
                        help="end with one table per model: plain, knob and remat per fraction")
    args = parser.parse_args()
    if args.table:
        print_tables(args.table)
        return
    global QUIET
    QUIET = args.summary
    if args.summary:
        demo_warnings.install()
    device = torch.device(args.device)
    # Dynamo runs nn.GRU eagerly, outside every compiled region, unless told to trace it.
    torch._dynamo.config.allow_rnn = True
    # Every contender is a copy of the same model: its code is compiled once per copy.
    torch._dynamo.config.recompile_limit = 256
    torch._dynamo.config.accumulated_recompile_limit = 4096
    results = {"machine": {"cpus": os.cpu_count(), "torch": torch.__version__,
                           "threads": torch.get_num_threads(), "device": str(device)},
               "rows": []}

    def save():
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, indent=2)

    fractions = [float(f) for f in args.fractions.split(",")]
    for name, (model, loss_fn, inputs) in models(args.quick, device,
                                                 args.models.split(",")).items():
        if args.dropout is not None:
            for module in model.modules():
                if isinstance(module, nn.Dropout):
                    module.p = args.dropout
        results["rows"] += bench_model(name, model, loss_fn, inputs, fractions, args, device)
        save()
    if args.summary:
        print_summary(results["rows"])
    if not args.skip_resnet and device.type == "cpu":
        results["rows"].append(resnet18_planning(args))
        report(results["rows"][-1])
        save()


if __name__ == "__main__":
    main()
