"""remat on models of the transformers library, trained on their own loss, with default
options (docs/python.md, "Models people train"): GPT-2 and Llama under Inductor, BERT (an
encoder) and T5 (an encoder-decoder) with ``compiler="aot_eager"``, and all four under
``wrap``. Inductor compiles slowly on two cores: the models are tiny and each budget compiles
once.

Every budget plans (a region that cannot reach its share runs its least-peak schedule and
says so), gradients match plain torch.compile (Inductor: within 1e-4) or eager autograd (bit
for bit), and the measured step peak, less the parameters' gradients, stays within what the
regions' plans promise (docs/python.md, "Memory"; under Inductor within 15% of it)."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch

import remat
import remat.torch

import hf_models
from measure import gradient_bytes, peak_bytes_of

BUDGETS = ("100%", "50%", "30%")
INDUCTOR_SLACK = 1.15


def step(module, inputs, net=None):
    (net or module).zero_grad(set_to_none=True)
    loss = module(*inputs)
    loss.backward()
    return loss.detach()


def grads(net):
    return [p.grad for p in net.parameters()]


def promised_bytes(plans) -> int:
    """What the regions' plans promise together: each region's budget, or its predicted peak
    where it runs a least-peak schedule above its budget."""
    return sum(max(r.plan.budget_bytes, r.plan.predicted_peak_bytes) for r in plans)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_causal_lms_plan_under_inductor_at_every_budget(name):
    module, inputs = getattr(hf_models, name)()
    torch._dynamo.reset()
    plain_net = copy.deepcopy(module)
    plain = torch.compile(plain_net, dynamic=False)
    step(plain, inputs, plain_net)
    plain_peak = peak_bytes_of(lambda: step(plain, inputs, plain_net))
    expected = grads(plain_net)
    for budget in BUDGETS:
        torch._dynamo.reset()
        backend = remat.torch.backend(budget=budget, time_limit_s=10)
        net = copy.deepcopy(module)
        compiled = torch.compile(net, backend=backend, dynamic=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", remat.BudgetWarning)
            step(compiled, inputs, net)
        torch.testing.assert_close(grads(net), expected, rtol=1e-4, atol=1e-5)
        plans = backend.plans
        assert plans and all(r.reference == "torch.compile's min-cut partition" for r in plans)
        for r in plans:
            assert r.within_budget == (r.note == ""), r.note
        measured = peak_bytes_of(lambda: step(compiled, inputs, net))
        if all(r.within_budget for r in plans):
            # Inductor's fusion can compute a recomputation earlier than planned and its
            # kernels allocate what the plan does not see (docs/python.md, "Memory"): measured
            # 10% above the plan on Llama at 50%.
            assert measured - gradient_bytes(net) <= INDUCTOR_SLACK * promised_bytes(plans), \
                (budget, measured)
        # A least-peak region (30% here) promises no measured peak under Inductor: its many
        # recomputations are what fusion moves most (measured above plain torch.compile's
        # once, on Llama at 30% on a loaded machine).
        if budget == "100%":
            assert all(r.plan.status == "reference" for r in plans)
            assert measured <= plain_peak, (measured, plain_peak)
        elif budget == "50%":
            assert measured < plain_peak, (budget, measured, plain_peak)


@pytest.mark.parametrize("name", ["bert", "t5"])
def test_encoder_and_encoder_decoder_plan_with_aot_eager_bit_for_bit(name):
    module, inputs = getattr(hf_models, name)()
    reference = copy.deepcopy(module)
    step(reference, inputs)
    for budget in BUDGETS:
        torch._dynamo.reset()
        # Whole regions (chunks=1): a head and loss in chunks sum in another order, equal up
        # to float reorderings (test_split.py), not bit for bit.
        backend = remat.torch.backend(budget=budget, time_limit_s=10, compiler="aot_eager",
                                      chunks=1)
        net = copy.deepcopy(module)
        compiled = torch.compile(net, backend=backend, dynamic=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", remat.BudgetWarning)
            step(compiled, inputs, net)
        for (n, p), q in zip(net.named_parameters(), reference.parameters()):
            assert torch.equal(p.grad, q.grad), (budget, n)
        plans = backend.plans
        assert plans and all(r.reference == "no rematerialization" for r in plans)
        if budget != "100%":
            assert sum(r.plan.recomputations for r in plans) > 0
        measured = peak_bytes_of(lambda: step(compiled, inputs, net))
        assert measured - gradient_bytes(net) <= promised_bytes(plans), (budget, measured)


@pytest.mark.parametrize("name", ["gpt2", "llama", "bert", "t5"])
def test_wrap_at_half_the_peak_is_bit_identical_to_eager(name):
    module, inputs = getattr(hf_models, name)()
    reference = copy.deepcopy(module)
    expected = step(reference, inputs)
    torch._dynamo.reset()
    planned = remat.torch.wrap(module, budget="50%", time_limit_s=10, chunks=1)  # as above
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", remat.BudgetWarning)
        loss = step(planned, inputs, module)
    assert torch.equal(loss, expected)
    for (n, p), q in zip(module.named_parameters(), reference.parameters()):
        assert torch.equal(p.grad, q.grad), n
    assert sum(r.plan.recomputations for r in planned.plans) > 0
