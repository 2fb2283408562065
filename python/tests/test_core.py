"""The binding of the C++ planner (remat._core): graphs, schedules, the simulator, strategies
and errors, on graphs small enough to check by hand."""

import json

import pytest

import remat


def chain(n: int, nbytes: int = 4, cost: float = 1.0) -> remat.Graph:
    nodes = [remat.Node(f"n{i}", remat.NodeKind.unlabeled, cost, nbytes) for i in range(n)]
    return remat.Graph(nodes, [(i, i + 1) for i in range(n - 1)], "unit", "chain")


def test_graph_round_trips_through_json():
    graph = chain(4)
    again = remat.Graph.from_json(graph.to_json())
    assert again.fingerprint == graph.fingerprint
    assert again.edges == [(0, 1), (1, 2), (2, 3)]
    assert json.loads(graph.to_json())["schema"] == "remat.graph/1"


def test_checkpoint_all_on_a_chain_costs_the_sum_and_peaks_at_two_values():
    # Four 4-byte nodes in a chain: without recomputation each node runs once (cost 4) and at
    # most a node's input and its output are live together (8 bytes).
    row = remat.run_strategy("checkpoint-all", chain(4), 8)
    assert row.fits and row.cost == 4.0 and row.peak_bytes == 8
    sim = remat.simulate(chain(4), row.schedule)
    assert (sim.cost, sim.peak_bytes, sim.evaluations) == (4.0, 8, 4)


def test_plan_lists_every_compute_and_free():
    graph = chain(3)
    row = remat.run_strategy("checkpoint-all", graph, 8)
    ops = remat.build_plan(graph, row.schedule)
    assert [op for op in ops if op[0] == "compute"] == [("compute", t, t) for t in range(3)]
    assert sum(op[0] == "free" for op in ops) == 3


def test_hand_made_schedule_is_validated():
    graph = chain(3)
    # Stage 2 runs node 2, which reads node 1, but node 1 is neither held nor recomputed.
    with pytest.raises(remat.InputError, match="stage 2"):
        remat.Schedule(graph, R=[[0], [1], [2]], S=[[], [0], [0]])
    with pytest.raises(remat.InputError, match="does not exist"):
        remat.Schedule(graph, R=[[0], [1], [7]], S=[[], [0], [1]])


def test_sizes_parse_like_the_command_line():
    assert remat.resolve_size("16GiB", 0) == 16 * 2**30
    assert remat.resolve_size("60%", 1000) == 600
    with pytest.raises(remat.UsageError, match="invalid size"):
        remat.resolve_size("lots", 0)


def test_errors_arrive_as_remat_exceptions():
    with pytest.raises(remat.InputError, match="cycle"):
        remat.Graph([remat.Node("a", remat.NodeKind.unlabeled, 1, 1),
                     remat.Node("b", remat.NodeKind.unlabeled, 1, 1)], [(0, 1), (1, 0)])
    with pytest.raises(remat.InputError, match="cost"):
        remat.Graph([remat.Node("a", remat.NodeKind.unlabeled, -1, 1)], [])
    with pytest.raises(remat.UsageError, match="unknown strategy"):
        remat.run_strategy("magic", chain(3), 8)
    assert issubclass(remat.InputError, remat.Error)
    assert issubclass(remat.CaptureError, remat.InputError)


def test_optimal_never_beats_the_lp_bound_and_fits():
    graph = chain(8)
    # Budget of three values: the chain needs two at a time, so recomputation is not needed
    # but the LP bound must still be at most the optimum.
    row = remat.run_strategy("optimal", graph, 12, time_limit_s=20)
    bound = remat.lp_lower_bound(graph, 12, time_limit_s=20)
    assert row.fits and row.peak_bytes <= 12
    assert bound.status == "optimal" and bound.cost <= row.cost + 1e-9
    best = remat.best_lower_bound(graph, 12, time_limit_s=20)
    assert best.status == "optimal" and bound.cost - 1e-9 <= best.cost <= row.cost + 1e-9
    assert best.source in ("LP relaxation", "absence-gap", "sum of node costs")


def test_any_dag_heuristics_fit_and_stay_above_the_best_bound():
    graph = chain(8)
    for name in ("evict", "local-search"):
        row = remat.run_strategy(name, graph, 8, time_limit_s=5)
        assert row.fits and row.peak_bytes <= 8, name
        assert remat.best_lower_bound(graph, 8).cost <= row.cost + 1e-9


def test_schedule_file_round_trip(tmp_path):
    graph = chain(5)
    row = remat.run_strategy("checkpoint-all", graph, 8)
    path = str(tmp_path / "plan.json")
    remat.save_schedule(graph, row.schedule, "checkpoint-all", 8, path)
    doc = remat.load_schedule(path)
    assert doc.strategy == "checkpoint-all" and doc.budget_bytes == 8
    assert doc.schedule.R == row.schedule.R and doc.schedule.S == row.schedule.S
    with pytest.raises(remat.InputError, match="cannot open|No such|does not exist"):
        remat.load_schedule(str(tmp_path / "missing.json"))


def test_a_schedule_over_its_recorded_budget_is_refused_unless_allowed(tmp_path):
    graph = chain(5)
    row = remat.run_strategy("checkpoint-all", graph, 8)
    path = str(tmp_path / "over.json")
    remat.save_schedule(graph, row.schedule, "checkpoint-all", row.peak_bytes - 1, path)
    with pytest.raises(remat.InputError, match=r"over\.json: the schedule peaks at .*allow_over_budget=True"):
        remat.load_schedule(path)
    assert remat.load_schedule(path, allow_over_budget=True).budget_bytes == row.peak_bytes - 1


def test_a_schedule_of_another_graph_is_refused():
    row = remat.run_strategy("checkpoint-all", chain(5), 8)
    with pytest.raises(remat.InputError, match="another graph"):
        remat.build_plan(chain(3), row.schedule)
    with pytest.raises(remat.InputError, match="another graph"):
        remat.simulate(chain(3), row.schedule)
    with pytest.raises(remat.InputError, match="does not exist"):
        chain(3).preds(7)


def test_hand_edited_schedule_file_is_bad_input(tmp_path):
    graph = chain(3)
    row = remat.run_strategy("checkpoint-all", graph, 8)
    path = tmp_path / "plan.json"
    remat.save_schedule(graph, row.schedule, "checkpoint-all", 8, str(path))
    document = json.loads(path.read_text())
    # Node 1 is no longer held into stage 2, where node 2 reads it: the schedule breaks the
    # correctness rule of docs/design.md §3 and must be refused naming the file and the violation.
    document["S"][1] = []
    path.write_text(json.dumps(document))
    with pytest.raises(
        remat.InputError,
        match=r"plan\.json: R/S: the schedule is not valid: stage 2: node 2 \('n2'\) reads "
        r"node 1 \('n1'\), which is neither computed nor held",
    ):
        remat.load_schedule(str(path))
