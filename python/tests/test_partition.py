"""The partitioner on schedules that real models' plans contain (docs/design.md §7,
"The PyTorch partitioner"), and the reference schedule that percentages are of (remat/torch/reference.py)."""

from __future__ import annotations

import copy
import os

import pytest
import torch
from torch import nn
from torch._dynamo.backends.common import aot_autograd

import remat
import remat.torch
from remat import _core
from remat.torch.backend import _boxed_eager
from remat.torch.partition import RematPartition
from remat.torch.reference import (draws_randomness, held_until_of, min_cut_schedule,
                                   recomputed_runs)
from remat.torch.region import RegionSchedule

import networks


def last_readers(joint):
    held = list(range(len(joint)))
    for u, v in joint.edges:
        held[u] = max(held[u], v)
    return held


def run_with_schedule(model, loss_fn, inputs, make_held_until):
    """One step of ``model`` compiled with the schedule that holds each node through
    ``make_held_until(joint)`` (every other read recomputes); returns the schedule's graph,
    the schedule and the loss."""
    made = {}

    def plan(joint, _saved, _held):
        graph = joint.to_graph([1.0] * len(joint), "flop")
        schedule = _core.schedule_holding(graph, make_held_until(joint))
        made.update(graph=graph, schedule=schedule, joint=joint)
        return RegionSchedule(None, graph, schedule)

    partition = RematPartition(plan)
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=False, backend=aot_autograd(
        fw_compiler=_boxed_eager, bw_compiler=_boxed_eager, partition_fn=partition))
    torch.manual_seed(3)
    loss = loss_fn(compiled(inputs[0]), *inputs[1:])
    loss.backward()
    return made, loss.detach()


def computations(made, node):
    return sum(1 for kind, _, v in _core.build_plan(made["graph"], made["schedule"])
               if kind == "compute" and v == node)


@pytest.mark.parametrize("name", ["mlp", "gpt"])
def test_a_schedule_that_computes_the_loss_node_again_keeps_the_forward_outputs(name):
    # A plan may free the tangents and compute the loss node again in backward (GPT-2's
    # logits gradient): its second computation must not emit the forward outputs again, in
    # the backward graph ("... was invalid, but is output").
    model, loss_fn, inputs = getattr(networks, name)()
    reference = copy.deepcopy(model)
    torch.manual_seed(3)
    expected = loss_fn(reference(inputs[0]), *inputs[1:])
    expected.backward()

    def hold_all_but_the_tangents(joint):
        held = last_readers(joint)
        held[joint.loss] = joint.loss
        return held

    made, loss = run_with_schedule(model, loss_fn, inputs, hold_all_but_the_tangents)
    assert computations(made, made["joint"].loss) >= 2
    assert torch.equal(loss, expected.detach())
    for (n, p), q in zip(model.named_parameters(), reference.parameters()):
        assert torch.equal(p.grad, q.grad), n


def test_holding_schedule_recomputes_exactly_what_is_not_held():
    # Hand-checkable: a chain a -> b -> c -> loss -> c' -> b' -> a' where each backward node
    # reads its forward twin.
    nodes = [remat.Node(n, k, 1.0, 10) for n, k in
             [("a", remat.NodeKind.forward), ("b", remat.NodeKind.forward),
              ("c", remat.NodeKind.forward), ("loss", remat.NodeKind.loss),
              ("c'", remat.NodeKind.backward), ("b'", remat.NodeKind.backward),
              ("a'", remat.NodeKind.backward)]]
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (2, 4), (4, 5), (1, 5), (5, 6), (0, 6)]
    graph = remat.Graph(nodes, edges, "flop", "chain")
    everything = _core.schedule_holding(graph, [6, 5, 4, 4, 5, 6, 6])
    assert remat.simulate(graph, everything).cost == 7
    # b held only through the forward: b' recomputes it from a (held), nothing else.
    forward_only = _core.schedule_holding(graph, [6, 2, 4, 4, 5, 6, 6])
    result = remat.simulate(graph, forward_only)
    assert result.cost == 8 and list(result.evaluations_per_node) == [1, 2, 1, 1, 1, 1, 1]
    with pytest.raises(remat.InputError, match="held_until"):
        _core.schedule_holding(graph, [7, 0, 0, 0, 0, 0, 0])


def test_min_cut_reference_holds_saved_values_to_their_last_reader():
    model, loss_fn, inputs = networks.mlp(batch=16, width=8, depth=2)
    made, _ = run_with_schedule(model, loss_fn, inputs, last_readers)
    joint = made["joint"]
    forward = range(joint.loss)
    everything = held_until_of(joint, set(forward))
    assert everything == last_readers(joint)
    nothing = held_until_of(joint, set())
    for i in forward:
        assert nothing[i] <= joint.loss
    graph = made["graph"]
    assert remat.simulate(graph, _core.schedule_holding(graph, nothing)).cost > \
        remat.simulate(graph, _core.schedule_holding(graph, everything)).cost



def test_a_partition_recomputes_what_it_does_not_save_once_and_keeps_it():
    # torch's backward graph computes an unsaved forward value once, before its first backward
    # reader, and keeps it until its last: read as a schedule, saving nothing recomputes each
    # forward value backward needs exactly once (read without the runs, a value read by
    # several backward stages was recomputed at each, and the knob's partitions cost 1.6-2.9x
    # on a GPT-2 whose measured steps took 1.04-1.15x).
    model, loss_fn, inputs = networks.mlp(batch=16, width=8, depth=2)
    made, _ = run_with_schedule(model, loss_fn, inputs, last_readers)
    joint, graph = made["joint"], made["graph"]
    runs = recomputed_runs(joint, set())
    assert runs and all(joint.loss < first <= last for _, first, last in runs)
    evaluations = remat.simulate(graph, min_cut_schedule(graph, joint, set())).evaluations_per_node
    needed_in_backward = {u for u, v in joint.edges if v > joint.loss and u < joint.loss}
    assert max(evaluations[u] for u in range(joint.loss)) == 2
    assert all(evaluations[u] == 2 for u in needed_in_backward if u not in joint.once)
    without_runs = remat.simulate(graph, _core.schedule_holding(graph, held_until_of(joint, set())))
    assert max(without_runs.evaluations_per_node[:joint.loss]) > 2
    assert not recomputed_runs(joint, set(range(joint.loss)))  # saving all recomputes nothing


def test_a_recomputed_values_inputs_are_held_only_until_its_recomputation():
    # torch's backward graph computes an unsaved forward value once, from inputs it needs only
    # until then. (They were held until the value's last reader: the knob's partitions read
    # 1.1-1.5x their measured peaks where plain torch.compile's read 0.95-1.15x.)
    model, loss_fn, inputs = networks.mlp(batch=16, width=8, depth=3)
    made, _ = run_with_schedule(model, loss_fn, inputs, last_readers)
    joint, graph = made["joint"], made["graph"]
    inputs_of, read_in_backward = {}, set()
    for u, v in joint.edges:
        inputs_of.setdefault(v, []).append(u)
        if u < joint.loss < v:
            read_in_backward.add(u)
    # Backward recomputes the values it reads whose inputs it saves.
    recomputed = set()
    for w in sorted(read_in_backward - joint.once):
        if not recomputed & set(inputs_of.get(w, ())):
            recomputed.add(w)
    saved = set(range(joint.loss)) - recomputed
    runs = recomputed_runs(joint, saved)
    held = held_until_of(joint, saved)
    until_last_reader = list(held)
    for w, first, last in runs:
        for u in inputs_of.get(w, ()):
            assert held[u] >= first - 1  # live where w is recomputed
            until_last_reader[u] = max(until_last_reader[u], last)
    assert until_last_reader != held
    tight = remat.simulate(graph, min_cut_schedule(graph, joint, saved))
    loose = remat.simulate(graph, _core.schedule_holding(graph, until_last_reader, runs))
    assert tight.cost == loose.cost and tight.peak_bytes < loose.peak_bytes


def test_torchs_partition_never_recomputes_what_must_run_once():
    # Inductor's seed draw and in-place writes run once; torch keeps them whether its
    # partition saves them or not, so the partition read as a schedule holds them.
    model, loss_fn, inputs = networks.mlp(batch=16, width=8, depth=2)
    made, _ = run_with_schedule(model, loss_fn, inputs, last_readers)
    joint = made["joint"]
    read_in_backward = [u for u, v in joint.edges if u < joint.loss < v]
    v = read_in_backward[0]
    assert held_until_of(joint, set())[v] < last_readers(joint)[v]
    joint.once = {v}
    assert held_until_of(joint, set())[v] == last_readers(joint)[v]


def test_a_plan_that_is_torchs_partition_drawing_randomness_again_runs_remats_graphs():
    # torch's knob (activation_memory_budget below 1; at 0 here) recomputes a dropout in its
    # backward graph, which draws another mask there: its gradients are not those of the
    # forward that ran. A plan that is that partition runs remat's own graphs of the same
    # schedule, whose backward recomputes the dropout from the forward's draw: the gradients
    # are eager autograd's. (Running torch's graphs, the first layer's gradients differ.)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Dropout(0.5), nn.Linear(64, 16))
    x = torch.randn(32, 16)
    eager = copy.deepcopy(model)
    torch.manual_seed(5)
    eager(x).pow(2).mean().backward()
    made = {}

    def plan(joint, partitions, _held):
        graph = joint.to_graph([1.0] * len(joint), "flop")
        knob = partitions.at(0.0)
        made.update(torch_draws=draws_randomness(knob.backward),
                    plain_draws=draws_randomness(partitions.at(1.0).backward))
        return RegionSchedule(None, graph, min_cut_schedule(graph, joint, knob.saved),
                              torch_budget=0.0)

    partition = RematPartition(plan, min_cut_reference=True)
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=False, backend=aot_autograd(
        fw_compiler=_boxed_eager, bw_compiler=_boxed_eager, partition_fn=partition))
    torch.manual_seed(5)
    compiled(x).pow(2).mean().backward()
    assert made["torch_draws"], "torch's knob at 0 should recompute the dropout in backward"
    assert not made["plain_draws"]
    for a, b in zip(eager.parameters(), model.parameters()):
        torch.testing.assert_close(b.grad, a.grad)


class _Masked(nn.Module):
    """Boolean-mask indexing (an output size that depends on the data) and ``.item()``."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        scale = h.mean().item()
        kept = h[h.sum(dim=1) > 0]
        return self.fc2(kept * scale)


def test_wrap_plans_around_data_dependent_operations_and_item():
    torch.manual_seed(0)
    model = _Masked()
    reference = copy.deepcopy(model)
    x = torch.randn(32, 8)
    reference(x).square().mean().backward()
    planned = remat.torch.wrap(model, budget="100%", strategy="checkpoint-all",
                               lower_bound=False)
    planned(x).square().mean().backward()
    assert len(planned.plans) >= 2  # regions on both sides of the graph breaks
    for (n, p), q in zip(model.named_parameters(), reference.parameters()):
        assert torch.equal(p.grad, q.grad), n


class _TwoRegions(nn.Module):
    """An MLP with its loss, split into two compiled regions by a graph break."""

    def __init__(self, width=64, depth=4):
        super().__init__()
        self.first = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.Tanh())
                                     for _ in range(depth)])
        self.second = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.Tanh())
                                      for _ in range(depth)])

    def forward(self, x, y):
        h = self.first(x)
        torch._dynamo.graph_break()
        return torch.nn.functional.mse_loss(self.second(h), y)


def test_memory_is_shared_by_the_regions_of_a_step():
    from measure import peak_bytes_of

    torch.manual_seed(0)
    model = _TwoRegions()
    x, y = torch.randn(256, 64), torch.randn(256, 64)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    resident = params + x.numel() * 4 + y.numel() * 4

    def measured(planned):
        def run():
            model.zero_grad(set_to_none=True)
            planned(x, y).backward()
        return peak_bytes_of(run)

    torch._dynamo.reset()
    free = remat.torch.wrap(model, budget="100%", strategy="checkpoint-all", lower_bound=False)
    no_remat = measured(free)
    assert len(free.plans) == 2
    # A device that holds the weights, their gradients and 90% of the step's activations:
    # the first region (planned first) keeps all it needs, the second must recompute. Without
    # the first region's share counted, the second would plan as if it had the device alone.
    # (The step peaks in the second region's backward, before the gradients are written.)
    memory = resident + params + int(0.9 * no_remat)
    torch._dynamo.reset()
    planned = remat.torch.wrap(model, memory=memory, strategy="optimal", time_limit_s=10)
    peak = measured(planned)
    first, second = planned.plans
    assert first.within_budget and second.within_budget and second.plan.recomputations > 0
    assert resident + peak <= memory, (resident + peak, memory)


def test_graphs_that_torch_rejects_are_remats_internal_error_with_the_joint_graph(monkeypatch):
    import re

    import torch._functorch.partitioners as partitioners

    def reject(*args, **kwargs):
        raise AssertionError("Node view_1 was invalid, but is output")

    monkeypatch.setattr(partitioners, "_extract_fwd_bwd_modules", reject)
    model, loss_fn, inputs = networks.mlp(batch=8, width=8, depth=2)
    torch._dynamo.reset()
    planned = remat.torch.wrap(model, budget="50%", strategy="checkpoint-all",
                               lower_bound=False)
    with pytest.raises(remat.InternalError, match="region 0: torch rejected") as raised:
        planned(inputs[0])
    path = re.search(r"written to (\S+)$", str(raised.value)).group(1)
    with open(path) as f:
        text = f.read()
    assert "was invalid, but is output" in text and "def forward" in text
    os.remove(path)


def test_an_attention_kernel_draws_random_numbers_only_with_dropout():
    # SDPA's kernels are tagged as seeded for their dropout: at dropout_p 0 they draw nothing,
    # and a recomputation needs no generator state (whose real tensor, saved and replayed
    # inside one graph, Inductor's fake propagation refuses: Qwen2-MoE at 30%).
    from remat.torch.storage_nodes import draws_random_numbers

    aten = torch.ops.aten
    graph = torch.fx.Graph()
    q = graph.placeholder("q")
    flash = aten._scaled_dot_product_flash_attention_for_cpu.default

    def call(target, *args, **kwargs):
        return graph.call_function(target, args, kwargs)
    assert not draws_random_numbers(call(flash, q, q, q))  # dropout_p's default: 0
    assert not draws_random_numbers(call(flash, q, q, q, 0.0, True))
    assert not draws_random_numbers(call(flash, q, q, q, dropout_p=0.0, is_causal=True))
    assert draws_random_numbers(call(flash, q, q, q, 0.1))
    assert draws_random_numbers(call(flash, q, q, q, dropout_p=0.1))
    assert draws_random_numbers(call(aten.native_dropout.default, q, 0.5, True))
    assert draws_random_numbers(call(aten.rand_like.default, q))
    assert not draws_random_numbers(call(aten.mm.default, q, q))
