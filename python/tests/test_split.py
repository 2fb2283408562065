"""Splitting a language model's head and loss into chunks of tokens (remat/torch/split.py)."""

import copy
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import hf_models
import remat.torch
from remat.torch.loss_gradient import chunked_loss
from remat.torch.split import chunk_sizes, loss_chains, split_chains


class HeadAndLoss(nn.Module):
    """An embedding, a head and its cross-entropy: the logits are 48 x 300 floats."""

    def __init__(self, reduction: str = "mean", return_logits: bool = False):
        super().__init__()
        self.embed = nn.Embedding(300, 16)
        self.head = nn.Linear(16, 300)
        self.reduction, self.return_logits = reduction, return_logits

    def forward(self, ids, labels):
        logits = self.head(torch.tanh(self.embed(ids))).float()
        loss = F.cross_entropy(logits.view(-1, 300), labels.view(-1), ignore_index=-100,
                               reduction=self.reduction)
        return (loss, logits) if self.return_logits else loss


def _dynamo_graph(model: nn.Module, *inputs) -> tuple:
    """Dynamo's graph of ``model`` on ``inputs`` and its example inputs (the parameters
    among them)."""
    captured = []

    def backend(gm, example_inputs):
        captured.append((gm, example_inputs))
        return gm.forward
    torch._dynamo.reset()
    torch.compile(model, backend=backend, dynamic=False)(*inputs)
    assert len(captured) == 1
    return captured[0]


def _inputs(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 300, (4, 12), generator=generator)
    labels = torch.randint(0, 300, (4, 12), generator=generator)
    labels[0, :5] = -100  # ignored targets: the mean divides by the 43 counted ones
    return ids, labels


def test_chunk_sizes_cover_the_rows_in_near_equal_parts():
    assert chunk_sizes(48, 5) == [10, 10, 10, 9, 9]
    assert chunk_sizes(3, 8) == [1, 1, 1]
    assert chunk_sizes(7, 1) == [7]


def test_a_head_and_its_loss_are_one_chain_and_logits_returned_are_none():
    torch.manual_seed(0)
    gm, _ = _dynamo_graph(HeadAndLoss(), *_inputs())
    chains = loss_chains(gm)
    assert [(c.rows, c.vocabulary, c.width, c.casts) for c in chains] == \
        [(48, 300, 16, (torch.float32,))]
    assert chains[0].logits_bytes == 48 * 300 * 4
    # Logits that leave the region are read outside the chain: it stays whole.
    gm, _ = _dynamo_graph(HeadAndLoss(return_logits=True), *_inputs())
    assert loss_chains(gm) == []


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("chunks", [1, 5, 48])
def test_the_chunked_loss_and_its_gradients_equal_the_whole_ones(reduction, chunks):
    torch.manual_seed(0)
    gm, example = _dynamo_graph(HeadAndLoss(reduction), *_inputs())
    split = split_chains(gm, chunks)
    calls = [n for n in split.graph.nodes if n.target is chunked_loss]
    assert [call.args[4] for call in calls] == [chunk_sizes(48, chunks)]
    params = [x for x in example if isinstance(x, torch.Tensor) and x.requires_grad]
    whole = gm(*example)[0]
    part = split(*example)[0]
    assert part.dtype == whole.dtype and part.shape == whole.shape
    torch.testing.assert_close(part, whole, rtol=1e-6, atol=1e-6)
    for a, b in zip(torch.autograd.grad(part, params), torch.autograd.grad(whole, params)):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)
    # The original graph is unchanged.
    assert sum(1 for n in gm.graph.nodes if n.target is F.cross_entropy) == 1


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_the_device_form_of_cross_entropy_is_a_chain_too(reduction):
    # Traced in a device's form (plan_for_device), cross-entropy is log_softmax and
    # nll_loss_forward in Dynamo's graph: the same chain, split the same way.
    from remat.torch.device_form import traced_as

    torch.manual_seed(0)
    with traced_as("cpu"):
        gm, example = _dynamo_graph(HeadAndLoss(reduction), *_inputs())
        chains = loss_chains(gm)
        assert [(c.rows, c.vocabulary, c.options["reduction"]) for c in chains] == \
            [(48, 300, reduction)]
        assert len(chains[0].loss_nodes) == 3
        split = split_chains(gm, 5)
        params = [x for x in example if isinstance(x, torch.Tensor) and x.requires_grad]
        whole, part = gm(*example)[0], split(*example)[0]
        torch.testing.assert_close(part, whole, rtol=1e-6, atol=1e-6)
        for a, b in zip(torch.autograd.grad(part, params), torch.autograd.grad(whole, params)):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)


def test_transformers_loss_is_in_the_models_region():
    # GPT-2's loss_function warns once (its class is not in transformers' loss mapping):
    # ignored while Dynamo traces, so the model and its loss are one region.
    model, inputs = hf_models.gpt2(layers=1, width=32, batch=2, seq=16)
    planned = remat.torch.wrap(model, budget="100%")
    planned(*inputs).backward()
    assert len(planned.plans) == 1


def test_below_the_whole_floor_the_region_is_split_and_meets_the_budget():
    # The logits (256 tokens x 4096 entries, 4 MiB) set the whole region's floor: three of
    # them in the loss's backward, far above 30% of its no-rematerialization peak.
    model, inputs = hf_models.gpt2(layers=1, width=32, batch=4, seq=64, vocab=4096)
    reference = copy.deepcopy(model)
    planned = remat.torch.wrap(model, budget="30%")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no BudgetWarning: the budget is met
        loss = planned(*inputs)
    loss.backward()
    (region,) = planned.plans
    assert region.chunks > 1 and region.within_budget
    whole_chunks, whole_peak, _ = region.split_attempts[0]
    assert whole_chunks == 1 and whole_peak > region.plan.budget_bytes
    expected = reference(*inputs)
    expected.backward()
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)
    largest = max(p.grad.abs().max() for p in reference.parameters())
    for p, q in zip(model.parameters(), reference.parameters()):
        assert (p.grad - q.grad).abs().max() <= 1e-5 * largest


def test_strict_refuses_a_region_only_once_no_chunks_meet_its_budget():
    model, inputs = hf_models.gpt2(layers=1, width=32, batch=4, seq=64, vocab=4096)
    planned = remat.torch.wrap(copy.deepcopy(model), budget="30%", strict=True)
    planned(*inputs).backward()
    assert planned.plans[0].chunks > 1 and planned.plans[0].within_budget
    # 1% is below even the chunked region's floor.
    planned = remat.torch.wrap(model, budget="1%", strict=True, time_limit_s=5)
    with pytest.raises(remat.InfeasibleBudgetError, match="in up to [0-9]+ chunks"):
        planned(*inputs)
    assert planned.plans == []


@pytest.mark.parametrize("build", [
    lambda: hf_models.gpt2(layers=1, width=32, batch=4, seq=32, vocab=2048),
    lambda: hf_models.llama(layers=1, width=32, batch=2, seq=32, vocab=2048)])
def test_a_lower_budget_never_runs_a_higher_predicted_peak(build):
    # From 100% down to 1% (far below any floor) of the region's reference peak. A plan
    # within its budget peaks no higher than the one at the budget above; a least-peak plan
    # (below the floor, whole or in chunks) no higher than any plan that met a budget above
    # it, and within 10% of its certified peak bound: least-peak plans of the same chunks at
    # two budgets differ only by what the time-limited search found.
    model, inputs = build()
    plans, reference = [], None
    for percent in (100, 70, 50, 30, 15, 5, 1):
        planned = remat.torch.wrap(copy.deepcopy(model), budget=f"{percent}%",
                                   time_limit_s=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", remat.BudgetWarning)
            planned(*inputs).backward()
        (region,) = planned.plans
        reference = reference or region.reference_peak_bytes
        assert region.reference_peak_bytes == reference
        plans.append(region.plan)
    peaks = [p.predicted_peak_bytes for p in plans]
    assert peaks[0] <= reference, peaks
    met = [p.predicted_peak_bytes for p in plans if p.status != "least-peak"]
    assert met == sorted(met, reverse=True), peaks
    below = [p for p in plans if p.status == "least-peak"]
    assert below, peaks  # 1% is below every floor
    for p in below:
        # A least peak that fits its budget is a start the strategy plans from again
        # (region.py): a least-peak plan is over its budget.
        assert p.predicted_peak_bytes > p.budget_bytes, peaks
        assert p.predicted_peak_bytes <= min(met), peaks
        assert p.peak_lower_bound_bytes <= p.predicted_peak_bytes
        assert p.peak_gap <= 0.10, (p.peak_gap, peaks)


def test_a_plan_in_chunks_is_saved_and_loaded_as_chunks(tmp_path):
    # chunks=4 splits the region whatever the budget; its schedule file's graph records the
    # chunks, so the run given the file splits the region so again, and plans nothing.
    model, inputs = hf_models.gpt2(layers=1, width=32, batch=2, seq=32, vocab=1024)
    planned = remat.torch.wrap(copy.deepcopy(model), budget="100%", chunks=4)
    planned(*inputs).backward()
    (region,) = planned.plans
    assert region.chunks == 4 and region.graph.name == "in 4 chunks"
    path = str(tmp_path / "plan.json")
    region.save_schedule(path)
    loaded = remat.torch.wrap(copy.deepcopy(model), budget="100%", schedule=path)
    loaded(*inputs).backward()
    assert [p.plan.status for p in loaded.plans] == ["loaded"]
    assert loaded.plans[0].chunks == 4
    assert loaded.plans[0].graph.fingerprint == region.graph.fingerprint
    whole = remat.torch.wrap(copy.deepcopy(model), budget="100%", chunks=1)
    whole(*inputs).backward()
    assert whole.plans[0].chunks == 1 and whole.plans[0].graph.name == ""
    with pytest.raises(remat.UsageError, match="chunks"):
        remat.torch.wrap(model, budget="50%", chunks=0)


def _loss_of(output):
    return output.loss


def test_a_plan_in_chunks_made_on_meta_is_loaded_by_the_cpu_run(tmp_path):
    # plan_for_device traces the step (the model and its .loss) on the meta device in the
    # CPU's form, in 4 chunks; the CPU's own step splits the same way and loads the file.
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=1024, n_positions=32,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config)
    ids = torch.randint(0, 1024, (2, 32))
    kwargs = {"input_ids": ids, "labels": ids}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # transformers' notes on meta tensors
        plans = remat.torch.plan_for_device(model, example_kwargs=kwargs, device="cpu",
                                            loss_fn=_loss_of, budget="50%", chunks=4,
                                            time_limit_s=10)
    (region,) = plans
    assert region.chunks == 4
    path = str(tmp_path / "plan.json")
    region.save_schedule(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", remat.BudgetWarning)  # 50% is below its floor
        step = remat.torch.plan_step(model, _loss_of, (), kwargs, budget="50%", schedule=path)
    assert [p.plan.status for p in step.plans] == ["loaded"]
    assert step.plans[0].graph.fingerprint == region.graph.fingerprint


def test_no_tensor_of_the_chunked_step_holds_more_than_a_chunks_logits():
    # The chunks' gradient is formed in the forward (loss_gradient.py): the joint graph has
    # no logits-sized tensor, in the forward or the backward, and computes each chunk's
    # logits once.
    from torch.fx.experimental.proxy_tensor import make_fx

    torch.manual_seed(0)
    gm, example = _dynamo_graph(HeadAndLoss(), *_inputs())
    split = split_chains(gm, 4)
    params = [x for x in example if isinstance(x, torch.Tensor) and x.requires_grad]

    def step(*inputs):
        return torch.autograd.grad(split(*inputs)[0], params)
    traced = make_fx(step)(*example)
    sizes = [n.meta["val"].numel() for n in traced.graph.nodes
             if isinstance(n.meta.get("val"), torch.Tensor)]
    # The largest are the head's weight and its gradient (300 x 16); a chunk's logits are
    # 12 of the 48 rows.
    assert max(sizes) == 300 * 16 < 48 * 300
    products = [n for n in traced.graph.nodes if n.target in (torch.ops.aten.addmm.default,
                                                               torch.ops.aten.mm.default)
                and n.meta["val"].shape == (12, 300)]
    assert len(products) == 4


@pytest.mark.parametrize("compiler", ["wrap", "inductor"])
def test_the_chunks_gradient_is_planned_in_the_forward_pass(compiler):
    # The gradient each chunk forms in its forward reads forward values only: remat's graph
    # has it as forward work (joint.py), so that no-rematerialization holds one chunk's log
    # softmax at a time, not every chunk's until backward. Under Inductor, its passes on the
    # joint graph rewrite the loss's backward with operations of no module (an iota and an
    # eq): they are the chunk's too.
    torch.manual_seed(0)
    model = HeadAndLoss()
    reference = copy.deepcopy(model)
    if compiler == "wrap":
        planned = remat.torch.wrap(model, budget="100%", chunks=4)
        step = planned
    else:
        torch._dynamo.reset()
        planned = remat.torch.backend(budget="100%", chunks=4)
        step = torch.compile(model, backend=planned, dynamic=False)
    step(*_inputs()).backward()
    (region,) = planned.plans
    graph = region.graph
    chunk_bytes = 12 * 300 * 4
    chunk_sized = [n for n in graph.nodes if n.bytes == chunk_bytes]
    assert len(chunk_sized) >= 4
    assert all(n.kind == remat.NodeKind.forward for n in chunk_sized)
    if compiler == "wrap":
        softmaxes = [n for n in graph.nodes if n.name.startswith("_log_softmax")]
        assert len(softmaxes) == 8  # each chunk's log softmax and its gradient
        assert all(n.kind == remat.NodeKind.forward for n in softmaxes)
    reference(*_inputs()).backward()
    largest = max(p.grad.abs().max() for p in reference.parameters())
    for p, q in zip(model.parameters(), reference.parameters()):
        assert (p.grad - q.grad).abs().max() <= 1e-5 * largest
    # Without recomputation the step peaks below what the whole logits' log softmax and its
    # gradient take (with the gradient as backward work, every chunk's log softmax waits for
    # backward and it peaks above that).
    peak = remat.simulate(graph, remat.run_strategy("checkpoint-all", graph, 0).schedule)
    assert peak.peak_bytes < 2 * 4 * chunk_bytes
