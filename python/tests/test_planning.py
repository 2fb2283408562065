"""remat.plan, remat.sweep and remat.max_batch (remat/planning.py) against the CLI's JSON on the
same zoo model: one planning layer, so the same numbers."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

import remat

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REMAT = os.environ.get("REMAT_BINARY", os.path.join(ROOT, "build", "src", "cli", "remat"))

# MobileNet at batch 2 and 32x32 (185 nodes): at 10 s its LP is skipped by a size rule, not by
# the clock, so both sides get the same absence-gap bound however loaded the machine is.
MODEL = ["--model", "mobilenet", "--batch", "2", "--resolution", "32x32"]
STRATEGIES = ["checkpoint-all", "chen-sqrtn-linear", "griewank-logn", "evict"]


def _graph():
    graph, fixed, _ = remat.zoo_model("mobilenet", batch=2, resolution=(32, 32))
    return graph, fixed


def _cli(*args):
    if not os.path.exists(REMAT):
        pytest.skip(f"the remat binary is not built at {REMAT}")
    run = subprocess.run([REMAT, *args, "--json", "--quiet"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def _same_row(py_row: remat.PlanRow, cli_row: dict, py_bound: float, cli_bound: float) -> None:
    assert py_row.strategy == cli_row["strategy"]
    assert py_row.status == cli_row["status"]
    if py_row.cost is None:
        assert "cost" not in cli_row
        return
    # Both sides simulate the same schedule of the same graph: equal to the last bit.
    assert py_row.cost == cli_row["cost"]
    assert py_row.peak_bytes == cli_row["peak_bytes"]
    if py_row.gap is None:
        assert "gap_to_lower_bound" not in cli_row
        return
    # Each gap is to its own side's bound, by the one gap formula.
    assert py_row.gap == remat._core.relative_gap(py_row.cost, py_bound)
    assert cli_row["gap_to_lower_bound"] == remat._core.relative_gap(cli_row["cost"], cli_bound)


def _same_bound(py_bound: float, cli_bound: float, py_rows, cli_rows: list) -> None:
    """Both bounds valid: at most the cost of every schedule within the budget, on both sides.
    Their values may differ: the absence-gap bound is CBC's proven bound when it stops, and it
    stops after a second without progress (docs/solvers.md), so the value depends on the
    machine's pace (in CI the two sides once differed by 0.013%)."""
    assert (py_bound is None) == (cli_bound is None)
    costs = [r.cost for r in py_rows if r.fits]
    if costs and py_bound is not None:
        assert max(py_bound, cli_bound) <= min(costs)
    for py_row, cli_row in zip(py_rows, cli_rows):
        _same_row(py_row, cli_row, py_bound, cli_bound)


def test_plan_matches_remat_solve():
    graph, fixed = _graph()
    # Python's limit bounds the whole plan and gives the bound at most half of it: at 20 s the
    # bound has the 10 s that the CLI gives it (its limit is per run).
    report = remat.plan(graph, budget="70%", strategies=STRATEGIES, time_limit_s=20)
    cli = _cli("solve", *MODEL, "--budget", "70%", "--strategy", ",".join(STRATEGIES),
               "--time-limit", "10")
    assert graph.fingerprint == cli["graph"]["fingerprint"]
    assert report.budget_bytes == cli["budget_bytes"]
    assert report.no_remat_cost == cli["no_remat_cost"]
    assert report.no_remat_peak_bytes == cli["no_remat_peak_bytes"]
    assert report.min_peak_bytes == cli["min_peak_lower_bound_bytes"]
    assert report.lower_bound_source == cli["lower_bound_source"]
    assert len(report.rows) == len(cli["results"])
    _same_bound(report.lower_bound, cli["lower_bound_cost"], report.rows, cli["results"])
    best = report.best()
    assert best is not None and all(best.cost <= r.cost for r in report.rows if r.fits)


def test_plan_from_device_memory_subtracts_the_fixed_memory():
    graph, fixed = _graph()
    report = remat.plan(graph, memory=fixed + 10_000_000, fixed_bytes=fixed,
                        strategies="checkpoint-all", lower_bound=False)
    assert report.device_bytes == fixed + 10_000_000
    assert report.budget_bytes == 10_000_000
    with pytest.raises(remat.InfeasibleBudgetError, match="fixed memory"):
        remat.plan(graph, memory=fixed, fixed_bytes=fixed, strategies="evict")
    with pytest.raises(remat.UsageError, match="budget= or memory="):
        remat.plan(graph, budget="50%", memory="1GB", strategies="evict")


def test_sweep_matches_remat_sweep():
    graph, _ = _graph()
    points = remat.sweep(graph, from_="60%", to="100%", points=3, strategies=STRATEGIES,
                         time_limit_s=10)
    cli = _cli("sweep", *MODEL, "--from", "60%", "--to", "100%", "--points", "3",
               "--strategies", ",".join(STRATEGIES), "--time-limit", "10")
    cli_points = cli["points"]
    assert [p.budget_bytes for p in points] == [p["budget_bytes"] for p in cli_points]
    for point, cli_point in zip(points, cli_points):
        _same_bound(point.lower_bound, cli_point["lower_bound_cost"], point.rows,
                    cli_point["results"])


def test_max_batch_matches_remat_maxbatch():
    memory = 64_000_000
    strategies = ["checkpoint-all", "chen-sqrtn-linear"]
    report = remat.max_batch(lambda b: remat.zoo_model("mobilenet", batch=b, resolution=(32, 32)),
                             memory=memory, strategies=strategies, time_limit_s=10,
                             max_batch=4096)
    cli = _cli("maxbatch", "--model", "mobilenet", "--resolution", "32x32", "--memory",
               str(memory), "--strategies", ",".join(strategies), "--time-limit", "10",
               "--max-batch", "4096")
    assert report.reference_batch == cli["checkpoint_all_max_batch"] > 0
    assert report.cap_ratio == cli["overhead_cap"]
    for search, cli_row in zip(report.results, cli["results"]):
        assert search.strategy == cli_row["strategy"]
        assert search.max_batch == cli_row["max_batch"]
        assert search.ratio == cli_row["ratio_vs_checkpoint_all"]
        assert [p.batch for p in search.probes] == [p["batch"] for p in cli_row["probes"]]


def test_max_batch_reports_a_builder_that_returns_the_wrong_shape():
    with pytest.raises(remat.UsageError, match="must return"):
        remat.max_batch(lambda b: 3, memory="1GB", strategies="checkpoint-all")
    with pytest.raises(remat.UsageError, match="not a percentage"):
        remat.max_batch(lambda b: _graph(), memory="50%")


def test_relative_gap_is_the_one_formula():
    assert remat.relative_gap(10.0, 8.0) == pytest.approx(0.2)
    assert remat.relative_gap(10.0, 12.0) == 0.0


def test_time_limit_bounds_the_whole_plan():
    # The bound and the strategies share one limit: a microsecond is spent by the time the
    # first strategy (checkpoint-all, which takes no time limit at all) is done, so evict and
    # the bound after it do not run (each would get the limit anew if it bounded each run).
    graph, _ = _graph()
    report = remat.plan(graph, budget="70%", strategies=["checkpoint-all", "evict"],
                        time_limit_s=1e-6)
    evict = report.row("evict")
    assert (evict.status, evict.solver_status) == ("no_schedule", "skipped")
    assert "total time limit" in evict.note
    assert report.lower_bound is None


def test_plan_saves_a_schedule_with_its_solver_status(tmp_path):
    # What remat solve -o writes: budget, solver status and the report's lower bound. A chain
    # of eight 4-byte values within 12 bytes: CBC proves its optimum at once.
    nodes = [remat.Node(f"n{i}", remat.NodeKind.unlabeled, 1.0, 4) for i in range(8)]
    graph = remat.Graph(nodes, [(i, i + 1) for i in range(7)], "unit", "chain")
    report = remat.plan(graph, budget=12, strategies=["checkpoint-all", "optimal"],
                        time_limit_s=60)
    path = str(tmp_path / "optimal.json")
    report.save_schedule(graph, path, "optimal")
    document = remat.load_schedule(path)
    assert document.solver_status == report.row("optimal").solver_status == "optimal"
    assert document.budget_bytes == report.budget_bytes == 12
    assert document.lower_bound_cost == report.lower_bound
    # remat.save_schedule takes the status of a run_strategy row the same way.
    row = remat.run_strategy("optimal", graph, 12, time_limit_s=20)
    remat.save_schedule(graph, row.schedule, row.strategy, 12, path,
                        solver_status=row.solver_status)
    assert remat.load_schedule(path).solver_status == "optimal"
    # A heuristic's schedule has no solver status (null in the file, "" when read).
    report = remat.plan(graph, budget="100%", strategies="checkpoint-all", time_limit_s=60)
    report.save_schedule(graph, path)
    assert remat.load_schedule(path).solver_status == ""


def test_plan_at_the_smallest_budget():
    # budget="min": the least peak found, a bound below it and the gap between them; the plan
    # runs at that budget and optimal keeps (at least) its schedule.
    graph, _ = _graph()
    report = remat.plan(graph, budget="min", strategies=["local-search", "optimal"],
                        time_limit_s=20)
    m = report.min_budget
    assert m is not None
    assert report.min_peak_bytes <= m.lower_bound_bytes <= m.peak_bytes <= report.budget_bytes
    assert m.gap == pytest.approx((m.peak_bytes - m.lower_bound_bytes) / m.peak_bytes)
    assert remat.simulate(graph, m.schedule).peak_bytes == m.peak_bytes
    assert report.row("optimal").fits
    # A budget as plain as "70%" has no smallest-budget report.
    assert remat.plan(graph, budget="70%", strategies="evict").min_budget is None
    with pytest.raises(remat.UsageError, match="either budget= or memory="):
        remat.plan(graph, budget="min", memory="1GiB")


def test_plan_takes_the_gap_target_and_says_why_optimal_stopped():
    graph, _ = _graph()
    report = remat.plan(graph, budget="70%", strategies="optimal", gap=0.5, time_limit_s=30)
    row = report.row("optimal")
    assert row.stop_reason in ("gap target reached", "proven optimal")
    assert row.gap is not None and row.gap <= 0.5
    for bad in (-0.1, 1.5, "1%", True):
        with pytest.raises(remat.UsageError, match="gap"):
            remat.plan(graph, budget="70%", gap=bad)
    with pytest.raises(remat.UsageError, match="patience_s"):
        remat.plan(graph, budget="70%", patience_s=0)


def test_known_schedules_are_starts_and_a_foreign_one_is_refused():
    graph = _graph()[0]
    budget = remat.plan(graph, budget="80%", strategies=["checkpoint-all"],
                        lower_bound=False).budget_bytes
    # optimal's schedule with time to spare, then local-search told of it with no time: it
    # is never costlier than the schedule it was told of.
    known = remat.plan(graph, budget=budget, strategies=["optimal"], time_limit_s=30,
                       lower_bound=False).rows[0]
    assert known.fits
    told = remat.plan(graph, budget=budget, strategies=["local-search"], time_limit_s=0.01,
                      lower_bound=False, starts=[("known", known.schedule)]).rows[0]
    assert told.fits and told.cost <= known.cost * (1 + 1e-12)
    other, _, _ = remat.zoo_model("vgg16", batch=1, resolution=(32, 32))
    foreign = remat.plan(other, budget="100%", strategies=["checkpoint-all"],
                         lower_bound=False).rows[0].schedule
    with pytest.raises(remat.UsageError, match="starts: the schedule 'foreign'"):
        remat.plan(graph, budget=budget, strategies=["local-search"],
                   starts=[("foreign", foreign)])
