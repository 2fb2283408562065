"""Planning for a device this machine lacks (remat/torch/for_device.py, device_form.py): a plan
made on the meta device in a device's form is the plan of the graph that device traces, so the
run there loads it without planning again."""

import copy
import warnings

import pytest
import torch

import remat
import remat.torch

import networks

from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM


def gpt2():
    """Tied input and output embeddings, and a loss that warns once inside transformers
    (ignored while Dynamo traces: one region with the model)."""
    config = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=64,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                        eos_token_id=0, use_cache=False)
    torch.manual_seed(0)
    return GPT2LMHeadModel(config)


def llama():
    config = LlamaConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                         num_key_value_heads=2, intermediate_size=128, vocab_size=256,
                         bos_token_id=0, eos_token_id=0, pad_token_id=0, use_cache=False)
    torch.manual_seed(0)
    return LlamaForCausalLM(config)


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # transformers' notes on meta tensors
        yield


@pytest.mark.parametrize("build", [llama, gpt2])
def test_a_plan_made_on_meta_in_the_cpus_form_is_loaded_by_the_cpu_run(tmp_path, build):
    model = build()
    ids = torch.randint(0, 256, (2, 32))
    optimizer = torch.optim.AdamW(model.parameters())
    before = [p.detach().clone() for p in model.parameters()]
    plans = remat.torch.plan_for_device(model, example_kwargs={"input_ids": ids, "labels": ids},
                                        device="cpu", budget="50%", time_limit_s=10)
    # Nothing of the model was touched: it was copied to the meta device.
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before))
    assert all(p.grad is None for p in model.parameters())
    # At 50% the plans recompute (a least-peak plan, below a region's floor, is saved too).
    assert plans and any(plan.plan.recomputations > 0 for plan in plans)
    paths = []
    for i, plan in enumerate(plans):
        paths.append(str(tmp_path / f"llama.{i}.json"))
        plan.save_schedule(paths[-1])
    # The CPU's own trace: the same graphs (fingerprints), so each region loads its file.
    torch._dynamo.reset()
    reference = copy.deepcopy(model)
    reference(input_ids=ids, labels=ids).loss.backward()
    planned = remat.torch.wrap(model, budget="50%", schedule=paths)
    planned(input_ids=ids, labels=ids).loss.backward()
    assert [p.graph.fingerprint for p in planned.plans] == [p.graph.fingerprint for p in plans]
    assert all(p.plan.status == "loaded" for p in planned.plans)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-6)
    optimizer.step()


def test_the_cuda_form_has_the_gpus_attention_and_the_losss_backward():
    with torch.device("meta"):
        model = llama().to(torch.bfloat16)
    ids = torch.zeros((1, 64), dtype=torch.long)
    plans = remat.torch.plan_for_device(model, example_kwargs={"input_ids": ids, "labels": ids},
                                        memory="40MB", optimizer=torch.optim.AdamW(
                                            model.parameters()), time_limit_s=10)
    names = [node.name for plan in plans for node in plan.graph.nodes]
    # A GPU's fused attention: flash, or memory-efficient where transformers passes a mask.
    assert any(n.startswith(("_scaled_dot_product_flash_attention_backward",
                             "_scaled_dot_product_efficient_attention_backward"))
               for n in names)
    assert any(n.startswith("nll_loss_backward") for n in names)
    # The optimizer's two bf16 moments per parameter are fixed memory beside the parameters
    # and their gradients: what is left of 40 MB is the budget.
    params = sum(p.numel() * 2 for p in model.parameters())
    plan = plans[0].plan
    assert plan.fixed_bytes >= 4 * params
    assert plan.budget_bytes <= 40_000_000 - 4 * params


def test_a_step_with_its_loss_planned_on_meta_is_loaded_by_plan_step(tmp_path):
    # At 50% this MLP's floor is over the budget: its least-peak plan is saved and loaded too.
    model, loss_fn, inputs = networks.mlp(batch=32, depth=4)
    plans = remat.torch.plan_for_device(model, inputs, device="cpu", loss_fn=loss_fn,
                                        budget="50%", time_limit_s=10)
    assert len(plans) == 1
    path = str(tmp_path / "mlp.json")
    plans[0].save_schedule(path)
    torch._dynamo.reset()
    step = remat.torch.plan_step(model, loss_fn, inputs, budget="50%", schedule=path)
    assert step.plan.status == "loaded" and step.plan.cost == plans[0].plan.cost
    step(*inputs)
    assert all(p.grad is not None for p in model.parameters())


def test_bad_options_are_usage_errors():
    model, loss_fn, inputs = networks.mlp(batch=4, depth=2)
    with pytest.raises(remat.UsageError, match="device must be one of cuda, cpu"):
        remat.torch.plan_for_device(model, inputs, device="tpu", budget="50%")
    with pytest.raises(remat.UsageError, match="this machine"):
        remat.torch.plan_for_device(model, inputs, budget="50%", flops_per_byte="machine")
    with pytest.raises(remat.UsageError, match="with loss_fn"):
        remat.torch.plan_for_device(model, inputs, budget="50%", model_inputs=1)
    with pytest.raises(remat.UsageError, match="example_inputs must be a tuple"):
        remat.torch.plan_for_device(model, inputs[0], budget="50%")
    with pytest.raises(remat.UsageError, match="exactly one"):
        remat.torch.plan_for_device(model, inputs)
    cached = llama()
    cached.config.use_cache = True
    with pytest.raises(remat.UsageError, match="use_cache = False"):
        remat.torch.plan_for_device(cached, example_kwargs={"input_ids": inputs[1][None]},
                                    budget="50%")
