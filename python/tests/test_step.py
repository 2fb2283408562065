"""``plan_step`` and ``export_graph`` (remat/torch/step.py): the model and its loss planned
together through ``wrap``'s capture and partitioner; a step gives what plain autograd gives."""

import copy
import json
import os
import subprocess

import pytest
import torch

import remat
import remat.torch

from remat.torch.wrap import PlannedModule

import networks
from conftest import reference_step

SEED = 1234
# The ResNet's least peak is above half its no-remat peak (measured convolution workspace).
BUDGET_OF = {"resnet": "70%"}


def planned_step(model, loss_fn, inputs, **options):
    options = {"budget": "50%", "time_limit_s": 20, "lower_bound": False, **options}
    return remat.torch.plan_step(model, loss_fn, inputs, **options)


def test_a_step_gives_the_loss_gradients_and_buffers_of_autograd_bit_for_bit(network_name):
    model, loss_fn, inputs = networks.NETWORKS[network_name]()
    ref_loss, ref_grads, ref_buffers = reference_step(model, loss_fn, inputs, SEED)
    model = copy.deepcopy(model)
    step = planned_step(model, loss_fn, inputs, budget=BUDGET_OF.get(network_name, "50%"))
    assert all(p.grad is None for p in model.parameters())  # planning reaches no .grad
    torch.manual_seed(SEED)
    loss = step(*inputs)
    # The same aten kernels as eager autograd, on the same values (a recomputed dropout draws
    # the mask of the first run).
    assert torch.equal(loss, ref_loss)
    for name, p in model.named_parameters():
        assert torch.equal(p.grad, ref_grads[name]), name
    for name, b in model.named_buffers():
        assert torch.equal(b, ref_buffers[name]), name
    for plan in step.plans:
        assert plan.within_budget, plan.note


def test_the_loss_is_planned_with_the_model():
    # One region holds the model and the loss: the loss's nodes are in the planned graph, and
    # the recomputation that a 50% budget needs is there.
    model, loss_fn, inputs = networks.mlp()
    step = planned_step(model, loss_fn, inputs)
    assert len(step.plans) == 1
    graph = step.plans[0].graph
    assert any("nll_loss" in node.name for node in graph.nodes)
    assert step.plan.recomputations > 0
    assert step.plan.predicted_peak_bytes < step.plan.no_remat_peak_bytes


def test_gradients_accumulate_over_two_steps():
    model, loss_fn, inputs = networks.mlp()
    reference = copy.deepcopy(model)
    for _ in range(2):
        loss_fn(reference(inputs[0]), inputs[1]).backward()
    step = planned_step(model, loss_fn, inputs, budget="70%")
    step(*inputs)
    step(*inputs)
    for p, q in zip(model.parameters(), reference.parameters()):
        assert torch.equal(p.grad, q.grad)


def test_inputs_that_require_grad_get_their_gradient():
    model, loss_fn, (x, y) = networks.mlp(batch=16)
    x.requires_grad_(True)
    ref = x.detach().clone().requires_grad_(True)
    loss_fn(copy.deepcopy(model)(ref), y).backward()
    step = planned_step(model, loss_fn, (x, y), budget="70%")
    step(x, y)
    assert x.grad is not None and torch.equal(x.grad, ref.grad)


def test_memory_counts_parameters_gradients_inputs_and_the_optimizer():
    model, loss_fn, inputs = networks.mlp()
    probe = planned_step(model, loss_fn, inputs, budget="100%", strategy="checkpoint-all")
    fixed = probe.plan.fixed_bytes
    params = sum(p.numel() * 4 for p in model.parameters())
    assert fixed >= 2 * params
    optimizer = torch.optim.Adam(model.parameters())
    step = planned_step(model, loss_fn, inputs, budget=None, memory=fixed + 2 * params + 10**6,
                        optimizer=optimizer, strategy="checkpoint-all")
    # Adam's two moments per parameter are fixed memory too: what is left is the budget.
    assert step.plan.budget_bytes == 10**6
    assert all(p.grad is None for p in model.parameters())


def test_bad_options_are_usage_errors_before_anything_is_traced(monkeypatch):
    model, loss_fn, inputs = networks.mlp()

    def no_trace(*args, **kwargs):
        raise AssertionError("the step was traced before its options were checked")

    monkeypatch.setattr(PlannedModule, "plan_now", no_trace)
    with pytest.raises(remat.UsageError, match="exactly one"):
        remat.torch.plan_step(model, loss_fn, inputs)
    with pytest.raises(remat.UsageError, match="unknown strategy"):
        remat.torch.plan_step(model, loss_fn, inputs, budget="50%", strategy="fastest")
    with pytest.raises(remat.UsageError, match="invalid size"):
        remat.torch.plan_step(model, loss_fn, inputs, budget="half")
    with pytest.raises(remat.UsageError, match="not a percentage"):
        remat.torch.plan_step(model, loss_fn, inputs, memory="150%")
    with pytest.raises(remat.UsageError, match="time_limit_s"):
        remat.torch.plan_step(model, loss_fn, inputs, budget="50%", time_limit_s=float("nan"))
    with pytest.raises(remat.UsageError, match="model_inputs"):
        remat.torch.plan_step(model, loss_fn, inputs, budget="50%", model_inputs=-1)
    with pytest.raises(remat.UsageError, match="loss_fn must be callable"):
        remat.torch.plan_step(model, "cross_entropy", inputs, budget="50%")
    with pytest.raises(remat.InputError, match="missing.json"):
        remat.torch.plan_step(model, loss_fn, inputs, budget="50%", schedule="missing.json")
    with pytest.raises(TypeError, match="costs"):
        remat.torch.plan_step(model, loss_fn, inputs, budget="50%", costs="profile")


def test_a_loss_that_is_not_one_element_is_refused():
    model, _, inputs = networks.mlp(batch=16)
    with pytest.raises(remat.UsageError, match="single element"):
        planned_step(model, lambda out, y: out, inputs)
    step = planned_step(model, torch.nn.functional.cross_entropy, inputs, budget="100%",
                        strategy="checkpoint-all")
    with pytest.raises(remat.InputMismatchError, match="planned for 2 inputs"):
        step(inputs[0])


def test_a_saved_schedule_is_loaded_instead_of_planned(tmp_path):
    model, loss_fn, inputs = networks.mlp(batch=16, depth=4)
    step = planned_step(model, loss_fn, inputs, budget="70%", strategy="optimal",
                        lower_bound=True)
    path = str(tmp_path / "plan.json")
    step.save_schedule(path)
    assert remat.load_schedule(path).solver_status == step.plan.status
    torch._dynamo.reset()
    again = planned_step(copy.deepcopy(model), loss_fn, inputs, budget="70%", schedule=path)
    assert again.plan.status == "loaded"
    assert again.plan.cost == step.plan.cost
    other, other_loss, other_inputs = networks.mlp(batch=16, width=32)
    with pytest.raises(remat.InputError, match="plan.json"):
        planned_step(other, other_loss, other_inputs, budget="70%", schedule=path)


class _Broken(torch.nn.Module):
    """Two linear layers with a graph break between them: two compiled regions."""

    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(8, 8), torch.nn.Linear(8, 2)

    def forward(self, x):
        h = torch.relu(self.first(x))
        torch._dynamo.graph_break()
        return self.second(h)


def test_a_step_of_several_regions_saves_each_of_them(tmp_path):
    model = _Broken()
    inputs = (torch.randn(4, 8), torch.randint(0, 2, (4,)))
    step = planned_step(model, torch.nn.functional.cross_entropy, inputs, budget="100%")
    assert len(step.plans) >= 2
    with pytest.raises(remat.UsageError, match=f"{len(step.plans)} regions"):
        step.save_schedule(str(tmp_path / "plan.json"))
    with pytest.raises(remat.UsageError, match="graph break"):
        remat.torch.export_graph(model, torch.nn.functional.cross_entropy, inputs,
                                 str(tmp_path / "graph.json"))
    assert not (tmp_path / "graph.json").exists()


def test_export_graph_writes_a_graph_for_the_cli(tmp_path):
    model, loss_fn, inputs = networks.mlp(batch=16, depth=4)
    path = str(tmp_path / "mlp.json")
    graph = remat.torch.export_graph(model, loss_fn, inputs, path, name="mlp step")
    loaded = remat.Graph.load(path)
    assert loaded.fingerprint == graph.fingerprint and loaded.cost_unit == "flop"
    assert loaded.name == "mlp step" and loaded.has_training_structure
    assert all(p.grad is None for p in model.parameters())
    cli = os.path.join(os.environ.get("REMAT_BIN_DIR", os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "src", "cli")), "remat")
    if not os.path.exists(cli):
        pytest.skip("the remat command is not built")
    out = subprocess.run([cli, "solve", "--graph", path, "--budget", "100%", "--strategy",
                          "checkpoint-all", "--json"], capture_output=True, text=True, check=True)
    row = json.loads(out.stdout)["results"][0]
    # The command simulates the same graph: the no-remat cost is the sum of the node costs.
    assert row["cost"] == pytest.approx(graph.total_cost)


def test_the_former_name_warns_and_plans():
    model, loss_fn, inputs = networks.mlp(batch=16, depth=2)
    with pytest.warns(DeprecationWarning, match="plan_step"):
        step = remat.torch.compile(model, loss_fn, inputs, budget="100%",
                                   strategy="checkpoint-all", lower_bound=False)
    assert isinstance(step, remat.torch.PlannedStep)


def test_threads_beyond_the_cli_range_are_refused_by_the_planning_calls():
    graph = remat.zoo_model("mobilenet", batch=1, resolution=(32, 32))[0]
    with pytest.raises(remat.UsageError, match="threads must be between 1 and 256"):
        remat.plan(graph, budget="70%", strategies="checkpoint-all", threads=9999)
    with pytest.raises(remat.UsageError, match="threads must be between 1 and 256"):
        remat.run_strategy("checkpoint-all", graph, 10**9, threads=257)


def chain_graph(n: int) -> remat.Graph:
    """n nodes of 4 bytes in a chain, cost 1 each: no rematerialization peaks at 8 bytes (a
    node and its input)."""
    nodes = [remat.Node(f"n{i}", remat.NodeKind.unlabeled, 1.0, 4) for i in range(n)]
    return remat.Graph(nodes, [(i, i + 1) for i in range(n - 1)])


@pytest.mark.parametrize("front_end", ["plan_step", "wrap", "backend"])
def test_a_schedule_over_the_budget_its_file_records_names_only_options_of_the_call(
        tmp_path, front_end):
    # The file records a budget 1 byte below its schedule's peak: remat.load_schedule's remedy
    # is allow_over_budget=True, which plan_step, wrap and backend do not take.
    graph = chain_graph(5)
    row = remat.run_strategy("checkpoint-all", graph, 0)
    path = str(tmp_path / "over.json")
    remat.save_schedule(graph, row.schedule, "checkpoint-all", row.peak_bytes - 1, path)
    model = torch.nn.Linear(4, 4)
    calls = {
        "plan_step": lambda: remat.torch.plan_step(model, lambda y: y.sum(),
                                                   [torch.ones(2, 4)], budget="50%",
                                                   schedule=path),
        "wrap": lambda: remat.torch.wrap(model, budget="50%", schedule=path),
        "backend": lambda: remat.torch.backend(budget="50%", schedule=path),
    }
    with pytest.raises(remat.InputError, match=r"schedule=.*over\.json: the schedule peaks at "
                                               r"8 B .*over the budget 7 B") as raised:
        calls[front_end]()
    assert "allow_over_budget" not in str(raised.value)
    assert "save_schedule()" in str(raised.value)
