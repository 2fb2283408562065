"""The executor (remat/torch/execute.py) on hand-made plans: it runs what the plan says and
refuses what the simulator would refuse."""

import pytest
import torch

import remat
import remat.torch
from remat.torch.execute import run_plan

import networks


def compiled_mlp():
    model, loss_fn, inputs = networks.mlp(batch=16, width=8, depth=2)
    step = remat.torch.plan_step(model, loss_fn, inputs, budget="100%", strategy="checkpoint-all",
                               lower_bound=False)
    return model, inputs, step


def run(step, model, inputs, operations, **options):
    return run_plan(step.captured, operations, dict(model.named_parameters()),
                    dict(model.named_buffers()), inputs, **options)


def test_reading_a_freed_value_is_an_internal_error():
    model, inputs, step = compiled_mlp()
    operations = list(step.operations)
    # Free the first freed node right after its own computation: its consumers then read a
    # value that is no longer held.
    first_free = next(i for i, op in enumerate(operations) if op[0] == "free")
    freed = operations.pop(first_free)
    operations.insert(operations.index(("compute", freed[2], freed[2])) + 1, freed)
    with pytest.raises(remat.InternalError, match="not live"):
        run(step, model, inputs, operations)


def test_a_plan_that_skips_a_node_is_an_internal_error():
    model, inputs, step = compiled_mlp()
    last = len(step.graph) - 1
    operations = [op for op in step.operations if op[2] != last]
    with pytest.raises(remat.InternalError, match="never computes node"):
        run(step, model, inputs, operations)


def test_recomputing_a_node_repeats_its_value_and_counts_once_more():
    model, inputs, step = compiled_mlp()
    operations = list(step.operations)
    # Free node 0 right after its first computation and compute it again at once: a
    # recomputation that changes nothing but the counters.
    at = operations.index(("compute", 0, 0))
    stage = operations[at][1]
    operations[at + 1:at + 1] = [("free", stage, 0), ("compute", stage, 0)]
    loss, stats = run(step, model, inputs, operations, apply_effects=False)
    reference, plain = run(step, model, inputs, step.operations, apply_effects=False)
    assert stats.recomputations == 1 and plain.recomputations == 0
    assert stats.computations == plain.computations + 1
    assert torch.equal(loss, reference)
    # Without effects nothing outside the executor changed.
    assert all(p.grad is None for p in model.parameters())


def test_measured_bytes_count_a_shared_storage_once():
    # out.view(...).t() shares out's storage: the held bytes never see it twice.
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64)
    inputs = (torch.randn(32, 64),)
    step = remat.torch.plan_step(model, lambda out: out.view(64, 32).t().sum(), inputs,
                               budget="100%", strategy="checkpoint-all", lower_bound=False)
    step(*inputs)
    assert step.last_run.measured_peak_bytes == step.plan.predicted_peak_bytes
