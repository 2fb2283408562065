"""The graph Inductor runs (remat/torch/fusion.py): fusible chains as one node per output, their
kernels' costs, and the schedules of that graph running with the gradients of eager autograd."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest
import torch
from torch import nn
from torch._dynamo.backends.common import aot_autograd
from torch._inductor.fx_passes.fusion_regions import is_fusible_node, is_view_node

import remat
import remat.torch
from remat import _core
from remat.torch.backend import _boxed_eager
from remat.torch.costs import joint_flops, node_flops
from remat.torch.fusion import fusion_groups
from remat.torch.partition import RematPartition
from remat.torch.region import RegionSchedule
from remat.torch.stage_fusion import STAGE

BATCH, WIDTH = 8, 16


class Chains(nn.Module):
    """Pointwise chains between matrix products: one with two outputs read outside it (the
    chain's result and, in backward, its intermediate), and a reduction."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(WIDTH, 2 * WIDTH)
        self.fc2 = nn.Linear(2 * WIDTH, WIDTH)

    def forward(self, x):
        h = self.fc1(x)
        g = torch.tanh(h * 2 + 1) * torch.sigmoid(h)
        return (self.fc2(g).exp() - 1).pow(2).mean()


def compile_with_plan(model, x, plan, *, fusion=True):
    """One step of ``model`` compiled (aot_eager) with the partitioner planning by ``plan``."""
    partition = RematPartition(plan, fusion=fusion)
    torch._dynamo.reset()
    compiled = torch.compile(model, dynamic=False, backend=aot_autograd(
        fw_compiler=_boxed_eager, bw_compiler=_boxed_eager, partition_fn=partition))
    loss = compiled(x)
    loss.backward()
    return loss.detach()


def joints(model, x):
    """The joint graph of ``model``'s step, and the same graph fused."""
    made = {}

    def plan(joint, _partitions, _held):
        from remat.torch.joint import read_joint_graph

        made["fused"] = joint
        made["joint"] = read_joint_graph(joint.module, len(joint.forward_outputs))
        graph = joint.to_graph([1.0] * len(joint), "flop")
        return RegionSchedule(None, graph, _core.run_strategy("checkpoint-all", graph, 0).schedule)

    compile_with_plan(model, x, plan)
    return made


@pytest.fixture(scope="module")
def chains():
    torch.manual_seed(0)
    return Chains(), torch.randn(BATCH, WIDTH)


def test_a_fused_node_holds_only_its_output_and_its_operations_fuse(chains):
    made = joints(*chains)
    joint, fused = made["joint"], made["fused"]
    assert fused.fused, "no fusible chain was found"
    assert len(fused) < len(joint)
    for v, ops in fused.fused.items():
        assert ops[-1] is fused.order[v] or is_view_node(ops[-1])
        for op in ops:
            assert is_fusible_node(op), op
            if op is not fused.order[v] and not is_view_node(op):
                # An operation inside the cone is no node's value: it is never materialised.
                assert fused.order[fused.base_of[op]] is not op, op
        assert fused.bytes[v] == joint.bytes[joint.base_of[fused.order[v]]]
    # Every edge goes forward, and forward nodes precede the loss, which precedes backward.
    assert all(u < v for u, v in fused.edges)
    assert all(fused.order[v] is not None for v in range(len(fused))
               if v != fused.loss and v not in fused.kernel_ends)
    # The values of the fused graph are values of the joint graph, fewer of them: its peak
    # without rematerialization is at most the joint graph's, and it materialises less.
    peak = {}
    for name in ("joint", "fused"):
        graph = made[name].to_graph([1.0] * len(made[name]), "flop")
        peak[name] = _core.run_strategy("checkpoint-all", graph, 0).peak_bytes
    assert peak["fused"] <= peak["joint"]
    assert sum(fused.bytes) < sum(joint.bytes)


def test_a_fused_node_costs_the_bytes_its_kernel_reads_and_writes(chains):
    made = joints(*chains)
    fused = made["fused"]
    costs = joint_flops(fused, flops_per_byte=2.0)
    for v, ops in fused.fused.items():
        inside = set(ops)
        read = {a for op in ops for a in op.all_input_nodes if a not in inside}
        read_bytes = sum(a.meta["val"].numel() * a.meta["val"].element_size() for a in read)
        assert costs[v] == 2.0 * (read_bytes + fused.bytes[v])
        # One kernel moves fewer bytes than its operations one by one.
        assert costs[v] < sum(node_flops(op, flops_per_byte=2.0) for op in ops)
    # The forward chain tanh(h * 2 + 1) * sigmoid(h) reads h once and writes the product (and,
    # for backward, what it saves): h is BATCH x 2 WIDTH floats.
    h_bytes = BATCH * 2 * WIDTH * 4
    forward_chain = [v for v, ops in fused.fused.items()
                     if v < fused.loss and any(op.target == torch.ops.aten.tanh.default
                                               for op in ops)]
    assert forward_chain
    v = forward_chain[-1]
    assert costs[v] == 2.0 * (h_bytes + fused.bytes[v])


def test_a_kernels_end_reads_its_inputs_and_outputs(chains):
    """Inductor writes a group's outputs from one kernel, which reads the group's inputs
    meanwhile. The forward chain's product tanh(h * 2 + 1) * sigmoid(h) reads only its two
    factors (outputs of the group: backward reads them), so without more the model would free
    h before the product is written; the kernel's end, after the group's last output, reads h
    and all three outputs, and costs and holds nothing."""
    made = joints(*chains)
    fused = made["fused"]
    inputs: dict[int, set[int]] = {v: set() for v in range(len(fused))}
    for u, v in fused.edges:
        inputs[v].add(u)
    forward = [(v, fused.order[v].target) for v in range(fused.loss)
               if v not in fused.kernel_ends]
    h = next(v for v, target in forward if target == torch.ops.aten.addmm.default)
    [tanh] = [v for v, target in forward if target == torch.ops.aten.tanh.default]
    [sigmoid] = [v for v, target in forward if target == torch.ops.aten.sigmoid.default]
    [product] = [v for v, target in forward if target == torch.ops.aten.mul.Tensor
                 and {tanh, sigmoid} <= inputs[v]]
    assert h not in inputs[product]
    [end] = [e for e, last in fused.kernel_ends.items() if last == product]
    assert end == product + 1 and inputs[end] == {h, tanh, sigmoid, product}
    assert fused.bytes[end] == 0 and joint_flops(fused)[end] == 0
    assert not any(u == end for u, _ in fused.edges)  # nothing reads it
    # In every group whose outputs read different inputs, the end reads them all.
    ends = {last: end for end, last in fused.kernel_ends.items()}
    for members, _ in fusion_groups(made["joint"]):
        outputs = {fused.base_of[made["joint"].order[u]] for u in members
                   if fused.order[fused.base_of[made["joint"].order[u]]]
                   is made["joint"].order[u]}
        outside = set().union(*(inputs[v] for v in outputs)) - outputs
        if all(outside <= inputs[v] for v in outputs):
            continue
        assert inputs[ends[max(outputs)]] == outside | outputs


def schedule_holding(joint, hold):
    """The graph of ``joint`` at unit costs and a schedule of it that holds every value until
    its last reader (``hold="everything"``), or holds no forward value into backward
    (``"nothing"``: each is recomputed wherever backward reads it)."""
    graph = joint.to_graph([1.0] * len(joint), "flop")
    last = list(range(len(joint)))
    last_in_forward = list(range(len(joint)))
    for u, v in joint.edges:
        last[u] = max(last[u], v)
        if v <= joint.loss:
            last_in_forward[u] = max(last_in_forward[u], v)
    held = last if hold == "everything" else [
        last[i] if i >= joint.loss else last_in_forward[i] for i in range(len(joint))]
    return graph, _core.schedule_holding(graph, held)


@pytest.mark.parametrize("hold", ["everything", "nothing"])
def test_schedules_of_the_fused_graph_run_with_eager_gradients(chains, hold):
    model, x = chains
    reference = copy.deepcopy(model)
    expected = reference(x)
    expected.backward()
    made = {}

    def plan(joint, _partitions, _held):
        graph, schedule = schedule_holding(joint, hold)
        made.update(joint=joint, graph=graph, schedule=schedule)
        return RegionSchedule(None, graph, schedule)

    trained = copy.deepcopy(model)
    loss = compile_with_plan(trained, x, plan)
    assert torch.equal(loss, expected.detach())
    for (name, p), q in zip(trained.named_parameters(), reference.parameters()):
        assert torch.equal(p.grad, q.grad), name
    joint = made["joint"]
    computed = {}
    for kind, _stage, v in _core.build_plan(made["graph"], made["schedule"]):
        if kind == "compute":
            computed[v] = computed.get(v, 0) + 1
    again = [v for v in joint.fused if computed.get(v, 0) > 1]
    assert bool(again) == (hold == "nothing")


def test_the_backend_plans_the_fused_graph_under_inductor(chains):
    model, x = chains
    plain = copy.deepcopy(model)
    torch._dynamo.reset()
    expected = torch.compile(plain, dynamic=False)(x)
    expected.backward()
    trained = copy.deepcopy(model)
    backend = remat.torch.backend(budget="90%", strategy="local-search", time_limit_s=10)
    torch._dynamo.reset()
    loss = torch.compile(trained, backend=backend, dynamic=False)(x)
    loss.backward()
    torch.testing.assert_close(loss, expected.detach(), rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(trained.named_parameters(), plain.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=name)
    region = backend.plans[0]
    assert any(node.name.startswith("fused_") for node in region.graph.nodes)
    assert region.within_budget


def compile_inductor_with_plan(model, x, plan):
    """One step of ``model`` under Inductor with the partitioner planning by ``plan`` and the
    stage rules, the stages each kernel Inductor fused runs (stages_of), and the plan's peak
    that each compiled graph carried (StageMemory)."""
    from torch._functorch import config as functorch_config
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.custom_graph_pass import CustomSchedulerPass

    from remat.torch.backend import _partitioner_class
    from remat.torch.stage_fusion import MEMORY, stage_barrier, stages_of

    kernels = []

    class Inspect(CustomSchedulerPass):
        def __call__(self, nodes):
            from torch._inductor.virtualized import V

            kernels.extend(stages_of(n) for n in nodes)
            peaks.append(V.graph.module.meta[MEMORY].peak)
            return nodes

        def uuid(self):
            return None

        def __reduce__(self):
            return (str, ("test_fusion kernels",))

    partition = RematPartition(plan, fusion=True)

    def compiler(gm, inputs):
        patches = {"custom_partitioner_fn": _partitioner_class()(partition),
                   "fx_graph_cache": False, "_post_fusion_custom_pass": Inspect()}
        with functorch_config.patch(enable_autograd_cache=False,
                                    force_non_lazy_backward_lowering=True), \
                stage_barrier():
            return compile_fx(gm, inputs, config_patches=patches)

    torch._dynamo.reset()
    peaks = []
    loss = torch.compile(model, backend=compiler, dynamic=False)(x)
    loss.backward()
    return loss.detach(), kernels, peaks


class Origin:
    """A stand-in for an FX node among a scheduler node's origins (hashable, as FX nodes are)."""

    def __init__(self, meta, graph):
        self.meta, self.graph = meta, graph


def scheduler_node(*parts):
    """A stand-in for a node of Inductor's scheduler. Each part is the mark of the operation it
    computes, (stage, recomputed) as the partitioner tags it, or None for an operation without
    one; or a list of them, the origins of a part into which Inductor inlined producers, in
    graph order (the last is the operation whose value the part writes)."""
    graph = SimpleNamespace(nodes=[])

    def part(marks):
        origins = []
        for mark in marks if isinstance(marks, list) else [marks]:
            origin = Origin({} if mark is None else {STAGE: mark}, graph)
            graph.nodes.append(origin)
            origins.append(origin)
        # Inductor keeps a part's origins as a set: their order there is not the graph's.
        return SimpleNamespace(node=SimpleNamespace(origins=origins[::-1]))
    made = [part(marks) for marks in parts]
    return SimpleNamespace(get_nodes=lambda: made, get_name=lambda: "op")


def recording_rule():
    """The backend's fusion choices over choices that allow every fusion and record what they
    were asked (the list returned)."""
    from remat.torch.stage_fusion import _StageBarrier

    asked = []

    class Inner:
        def can_fuse(self, scheduler, node1, node2, score):
            asked.append((node1, node2))
            return True

    return _StageBarrier(Inner()), asked


@pytest.mark.parametrize("backward", [True, False])
def test_the_stage_rule_refuses_only_a_recomputation_across_stages(backward):
    from torch._inductor.virtualized import V

    rule, asked = recording_rule()
    recomputed_3 = scheduler_node((3, True), (3, False))
    first_5 = scheduler_node((5, False))
    cases = [
        (recomputed_3, first_5, not backward),  # a recomputation moved to another stage
        (first_5, scheduler_node((7, True)), not backward),
        (recomputed_3, scheduler_node((3, False), None), True),  # within its stage
        (first_5, scheduler_node((2, False)), True),  # first computations: Inductor's own
        (scheduler_node(None), first_5, True),
        # A part that writes a value of stage 5, with a recomputation of stage 2 inlined into
        # it: a kernel of stage 5, not a recomputation.
        (scheduler_node([(2, True), (5, False)]), first_5, True),
        (scheduler_node([(5, False), (2, True)]), first_5, not backward),
    ]
    with V.set_graph_handler(SimpleNamespace(is_backward=backward)):
        for node1, node2, fuses in cases:
            asked.clear()
            assert rule.can_fuse(None, node1, node2, 1) is fuses, (node1, node2)
            # What the rule allows, the choices in force before decide.
            assert asked == ([(node1, node2)] if fuses else [])


def test_inductor_runs_recomputations_in_their_stage_with_eager_gradients(chains):
    model, x = chains
    reference = copy.deepcopy(model)
    expected = reference(x)
    expected.backward()

    made = {}

    def plan(joint, _partitions, _held):
        graph, schedule = schedule_holding(joint, "nothing")
        made.update(graph=graph, schedule=schedule)
        return RegionSchedule(None, graph, schedule)

    trained = copy.deepcopy(model)
    loss, kernels, peaks = compile_inductor_with_plan(trained, x, plan)
    # Both graphs carry what the plan holds (the forward's fusions are checked against it).
    assert peaks == [_core.simulate(made["graph"], made["schedule"]).peak_bytes] * 2
    # The tags reach Inductor's kernels: the recomputations' among them. (On this small model
    # Inductor fuses no recomputation across stages without the rule either: the rule's
    # refusals are tested on stand-ins above.)
    assert any(recomputed for _, recomputed in kernels)
    assert not [stages for stages, recomputed in kernels if recomputed and len(stages) > 1]
    torch.testing.assert_close(loss, expected.detach(), rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(trained.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=name)


def test_the_machine_balance_is_measured_once_and_cached(tmp_path, monkeypatch):
    from remat.torch import balance

    monkeypatch.setenv("REMAT_CACHE_DIR", str(tmp_path))
    measured = []
    real = balance.measure_balance
    monkeypatch.setattr(balance, "measure_balance",
                        lambda device: measured.append(device) or real(device))
    first = balance.machine_balance("cpu")
    assert first > 0 and len(measured) == 1
    assert balance.machine_balance("cpu") == first and len(measured) == 1  # from the cache
    (tmp_path / "balance.json").write_text("{not json")
    with pytest.warns(UserWarning, match="is not JSON"):  # a broken cache: measured again
        assert balance.machine_balance("cpu") > 0 and len(measured) == 2


def test_machine_costs_plan_and_bad_values_are_refused(chains, tmp_path, monkeypatch):
    from remat.torch import balance

    monkeypatch.setenv("REMAT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(balance, "measure_balance", lambda device: 7.0)
    model, x = chains
    costs = {}
    for weight in (7.0, "machine"):
        backend = remat.torch.backend(budget="100%", compiler="aot_eager",
                                      flops_per_byte=weight, strategy="checkpoint-all")
        torch._dynamo.reset()
        torch.compile(copy.deepcopy(model), backend=backend, dynamic=False)(x).backward()
        costs[weight] = [n.cost for n in backend.plans[0].graph.nodes]
    assert costs["machine"] == costs[7.0]
    for bad in ("fast", -1, True):
        with pytest.raises(remat.UsageError, match="flops_per_byte"):
            remat.torch.backend(budget="50%", flops_per_byte=bad)


class Residual(nn.Module):
    """Pre-norm residual blocks: Inductor's layer-norm backward reads values that torch's
    partition computes in forward and saves."""

    def __init__(self, blocks=2):
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(WIDTH), nn.Linear(WIDTH, 2 * WIDTH), nn.GELU(),
                          nn.Linear(2 * WIDTH, WIDTH)) for _ in range(blocks))

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return x.pow(2).mean()


@pytest.mark.parametrize("fusion", [True, False])
def test_torchs_partition_read_as_a_schedule_recomputes_no_contraction(fusion):
    # Plain torch.compile's min-cut partition never recomputes a matrix product; read as a
    # remat schedule (the reference that percentages are of) it must not either.
    torch.manual_seed(0)
    model, x = Residual(), torch.randn(BATCH, WIDTH)
    backend = remat.torch.backend(budget="100%", fusion=fusion)
    torch._dynamo.reset()
    torch.compile(model, backend=backend, dynamic=False)(x).backward()
    region = backend.plans[0]
    assert region.plan.status == "reference"
    graph = region.graph
    computed: dict[int, int] = {}
    for kind, _stage, v in _core.build_plan(graph, region.schedule):
        if kind == "compute":
            computed[v] = computed.get(v, 0) + 1
    contractions = [v for v, node in enumerate(graph.nodes) if node.contraction]
    assert contractions
    assert [graph.nodes[v].name for v in contractions if computed[v] > 1] == []


def test_no_plan_that_the_knobs_partition_beats_in_peak_and_cost():
    # At 97% of plain torch.compile's peak, torch's knob at 0.97 has a partition within the
    # budget (at 0.95 of plain's peak in remat's model): the plan holds no more than it and
    # costs no more.
    torch.manual_seed(0)
    model, x = Residual(), torch.randn(BATCH, WIDTH)
    backend = remat.torch.backend(budget="97%")
    torch._dynamo.reset()
    torch.compile(model, backend=backend, dynamic=False)(x).backward()
    region = backend.plans[0]
    figures = dict((name, (peak, cost)) for name, peak, cost in region.torch_partitions)
    knob_peak, knob_cost = figures["torch's activation_memory_budget=0.97"]
    asked = int(0.97 * region.reference_peak_bytes)
    assert knob_peak < asked, "the knob's partition should fit this budget"
    assert region.plan.predicted_peak_bytes <= knob_peak
    assert region.plan.cost <= knob_cost
    assert region.plan.budget_bytes == knob_peak and "activation_memory_budget" in region.tightened


def test_torchs_partitions_of_a_model_with_dropout_are_offered():
    # Random operations under Inductor: torch's partitions, read as schedules, are offered as
    # starts (listed, in remat's model, whether they fit or not).
    torch.manual_seed(0)
    model = nn.Sequential(*[layer for _ in range(4) for layer in (
        nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Dropout(0.1), nn.Linear(4 * WIDTH, WIDTH))],
        nn.Linear(WIDTH, 1))
    backend = remat.torch.backend(budget="70%")
    torch._dynamo.reset()
    torch.compile(model, backend=backend, dynamic=False)(torch.randn(64, WIDTH)).sum().backward()
    names = [name for name, _, _ in backend.plans[0].torch_partitions]
    assert names == ["torch.compile's min-cut partition", "torch's activation_memory_budget=0.7"]


def test_a_region_whose_groups_cannot_be_contracted_is_planned_unfused(chains, monkeypatch):
    import remat.torch.fusion as fusion

    def broken(joint, groups=None, outputs=()):
        raise ValueError("the fusion groups are not convex: contracting them makes a cycle")

    monkeypatch.setattr(fusion, "fuse", broken)
    made = {}

    def plan(joint, _partitions, _held):
        made["joint"] = joint
        graph = joint.to_graph([1.0] * len(joint), "flop")
        return RegionSchedule(None, graph, _core.run_strategy("checkpoint-all", graph, 0).schedule)

    model, x = chains
    with pytest.warns(UserWarning, match="without Inductor's fusion groups"):
        compile_with_plan(copy.deepcopy(model), x, plan)
    assert made["joint"].fused == {}


def test_a_torch_without_fusion_regions_plans_unfused(chains, monkeypatch):
    import sys

    from remat.torch.fusion import fusion_groups

    joint = joints(*chains)["joint"]
    assert fusion_groups(joint)  # this torch has them: the chains fuse
    monkeypatch.setitem(sys.modules, "torch._inductor.fx_passes.fusion_regions", None)
    with pytest.raises(ValueError, match="no fusion regions"):
        fusion_groups(joint)


def test_torchs_partition_holds_the_same_forward_values_fused_or_not():
    # Under Inductor's decompositions torch saves a layer norm's statistic (rsqrt), a member
    # of a fused chain that nothing outside the chain reads: fused, it stays a node of its own
    # (not the chain's normalised output in its place). And torch computes some backward
    # operations (reading forward values alone) in forward and saves them; remat's reading
    # holds the forward values they derive from instead. Fused, the remat node that computes
    # one runs a chain of backward operations whose inputs reach far more forward values: the
    # reading must follow the operations. Either way it holds the same values fused or not.
    from remat.torch.joint import read_joint_graph
    from remat.torch.reference import TorchPartitions

    torch.manual_seed(0)
    model, x = Residual(blocks=3), torch.randn(BATCH, WIDTH)
    held = {}

    def plan(joint, partitions, _held):
        unfused = read_joint_graph(joint.module, len(joint.forward_outputs))
        for name, read in (("fused", joint), ("unfused", unfused)):
            saved = TorchPartitions(read, partitions.joint_inputs, partitions.num_fwd_outputs,
                                    partitions.static_lifetime_input_indices).at(1.0).saved
            held[name] = {read.order[v].name for v in saved}
        assert len(joint) < len(unfused)
        graph = joint.to_graph([1.0] * len(joint), "flop")
        return RegionSchedule(None, graph, _core.run_strategy("checkpoint-all", graph, 0).schedule)

    from torch._inductor.decomposition import select_decomp_table

    partition = RematPartition(plan, fusion=True, min_cut_reference=True)
    torch._dynamo.reset()
    torch.compile(model, dynamic=False, backend=aot_autograd(
        fw_compiler=_boxed_eager, bw_compiler=_boxed_eager, partition_fn=partition,
        decompositions=select_decomp_table()))(x).backward()  # Inductor's graph
    assert held["fused"] and held["fused"] == held["unfused"]


def test_what_a_scatter_writes_is_a_node_of_its_own():
    # Inductor materialises what a scatter writes, whatever fuses around it: an upsampling's
    # backward accumulates into zeros with index_put, several per layer, and inside a fused
    # chain remat counted none of them (a U-Net's step measured 1.56x its plan). Fused, each
    # scatter is a node that holds its output.
    from torch._inductor.decomposition import select_decomp_table

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.Upsample(scale_factor=2, mode="bilinear"),
                          nn.Conv2d(4, 2, 3, padding=1))
    x = torch.randn(2, 3, 8, 8)
    made = {}

    def plan(joint, _partitions, _held):
        made["fused"] = joint
        graph = joint.to_graph([1.0] * len(joint), "flop")
        return RegionSchedule(None, graph, _core.run_strategy("checkpoint-all", graph, 0).schedule)

    torch._dynamo.reset()
    torch.compile(model, dynamic=False, backend=aot_autograd(
        fw_compiler=_boxed_eager, bw_compiler=_boxed_eager,
        partition_fn=RematPartition(plan, fusion=True),
        decompositions=select_decomp_table()))(x).pow(2).mean().backward()
    fused = made["fused"]
    index_puts = (torch.ops.aten.index_put, torch.ops.aten._unsafe_index_put)
    scatters = [n for n in fused.module.graph.nodes if n.op == "call_function" and
                getattr(n.target, "overloadpacket", None) in index_puts]
    assert scatters and fused.fused, "Inductor's decompositions scatter in fused chains"
    kept = {node for node in fused.order if node is not None}
    assert [n.name for n in scatters if n not in kept] == []
