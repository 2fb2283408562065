"""The longest sequence a Llama-3-8B-shaped decoder trains at on an 80 GB device, planned on
this machine from fake tensors (docs/BENCHMARKS.md, "A Llama-3-8B-shaped decoder from
meta tensors").

The model is built on the meta device (nothing allocated): 32 layers, hidden 4096, 32 heads
with 8 KV heads, intermediate 14336, vocabulary 128256, bf16 parameters, gradients and AdamW
moments (two bf16 tensors per parameter: remat.torch.optimizer_state_bytes of an AdamW over
the bf16 parameters), batch 1, the model's own loss. One training step at sequence length s is
traced by ``remat.torch.plan_for_device`` on the meta device in its GPU form (nothing is
allocated, no kernel runs), and the region's remat graph is kept. ``remat.max_batch`` then
searches,
per strategy, the largest s (in steps of --step tokens) whose step fits --memory with fixed
memory = parameters + gradients + optimizer state + inputs, and says whether optimal's answer
is certified (the next length proven not to fit).

With --chunks K the step is the model and ``output.loss`` (the logits read only by the loss),
and its head and cross-entropy run in K chunks of tokens, its MLPs in as many as keep their
widest tensor no wider than a chunk's logits (remat.torch's ``chunks=``). With --attention
causal the attention is transformers' SDPA given no mask: SDPA's causal form, with no
sequence-squared mask (as flash attention trains).

Usage: .venv/bin/python scripts/plan_llama8b.py [--step 1024] [--max-steps 32]
           [--memory 80GB] [--layers 32] [--time-limit 60] [--chunks K]
           [--attention model|causal] [--plan-seq 4096 --save PLAN]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402

import remat  # noqa: E402
import remat.torch  # noqa: E402
from remat.torch import least_peak_bound  # noqa: E402


# --attention causal: transformers' SDPA attention given no mask, so that it runs SDPA's own
# causal form (is_causal=True), as flash attention's training does. Under tracing, torch 2.13's
# transformers builds the 4-D causal mask instead (seq^2 bf16, and its bool intermediates).
CAUSAL = "remat_causal_sdpa"


def _register_causal() -> None:
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    AttentionInterface.register(CAUSAL, sdpa_attention_forward)
    AttentionMaskInterface.register(CAUSAL, lambda *args, **kwargs: None)


def build(args, seq: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    attention = {}
    if args.attention == "causal":
        _register_causal()
        attention = dict(attn_implementation=CAUSAL)
    config = LlamaConfig(num_hidden_layers=args.layers, hidden_size=args.hidden,
                         num_attention_heads=32, num_key_value_heads=8,
                         intermediate_size=args.intermediate, vocab_size=args.vocab,
                         max_position_embeddings=max(seq, 8192), bos_token_id=0,
                         eos_token_id=0, pad_token_id=0, use_cache=False, **attention)
    with torch.device("meta"):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    return model


def _loss_of(output):
    return output.loss


def capture(args, seq: int):
    """(graph, fixed bytes, seconds) of one training step at sequence length ``seq``, traced on
    the meta device in its GPU form (remat.torch.plan_for_device) and planned trivially: only
    the graph is wanted here."""
    started = time.monotonic()
    model = build(args, seq)
    ids = torch.zeros((1, seq), dtype=torch.long)
    # With --chunks the step returns only the loss (plan_step's step), so that its head and
    # cross-entropy run in that many chunks of tokens; without, the model's own outputs.
    split = dict(loss_fn=_loss_of, chunks=args.chunks) if args.chunks else {}
    plans = remat.torch.plan_for_device(
        model, example_kwargs={"input_ids": ids, "labels": ids}, device=args.device,
        budget="100%", strategy="checkpoint-all", lower_bound=False, time_limit_s=600,
        **split)
    if len(plans) != 1:
        raise RuntimeError(f"the step compiled into {len(plans)} regions, not one")
    state = remat.torch.optimizer_state_bytes(torch.optim.AdamW(model.parameters()))
    return plans[0].graph, plans[0].plan.fixed_bytes + state, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--intermediate", type=int, default=14336)
    parser.add_argument("--vocab", type=int, default=128256)
    parser.add_argument("--memory", default="80GB")
    parser.add_argument("--step", type=int, default=1024)
    parser.add_argument("--max-steps", type=int, default=32)
    parser.add_argument("--time-limit", type=float, default=60)
    parser.add_argument("--strategies", default="checkpoint-all,checkpoint-blocks,optimal")
    parser.add_argument("--plan-seq", type=int, default=0,
                        help="only capture and plan this length at --memory (timed)")
    parser.add_argument("--save", default="", help="with --plan-seq: write the schedule here")
    parser.add_argument("--chunks", type=int, default=0,
                        help="the head and its loss in this many chunks of tokens, MLPs by "
                             "width (0: the model's own outputs, logits whole)")
    parser.add_argument("--attention", default="model", choices=["model", "causal"],
                        help="the model's SDPA attention with its 4-D causal mask (model), "
                             "or SDPA's own causal form with no mask (causal)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                        help="the device whose form the step is traced in")
    args = parser.parse_args()
    if args.plan_seq:
        graph, fixed, seconds = capture(args, args.plan_seq)
        print(f"seq {args.plan_seq}: {graph.size} nodes, captured in {seconds:.1f} s; fixed "
              f"{remat.format_bytes(fixed)}", flush=True)
        started = time.monotonic()
        report = remat.plan(graph, memory=args.memory, fixed_bytes=fixed,
                            strategies=args.strategies.split(","), time_limit_s=args.time_limit)
        print(f"planned in {time.monotonic() - started:.1f} s; budget "
              f"{remat.format_bytes(report.budget_bytes)}, no-remat peak "
              f"{remat.format_bytes(report.no_remat_peak_bytes)}, bound "
              f"{report.lower_bound} ({report.lower_bound_source})")
        for row in report.rows:
            print("  ", row)
        least, proof = least_peak_bound(graph)
        print(f"least peak of any emitted program at least {remat.format_bytes(least)} ({proof})")
        if args.save:
            # The graph is the one the GPU traces (plan_for_device), so the run there loads the
            # file: wrap(model, memory=..., optimizer=AdamW, schedule=PLAN).
            report.save_schedule(graph, args.save)
            print("schedule written to", args.save)
    else:
        cache: dict[int, tuple] = {}

        def graph_at(steps: int):
            if steps not in cache:
                graph, fixed, seconds = capture(args, steps * args.step)
                print(f"  seq {steps * args.step}: {graph.size} nodes, captured in "
                      f"{seconds:.1f} s", flush=True)
                cache[steps] = (graph, fixed)
            return cache[steps]

        started = time.monotonic()
        report = remat.max_batch(graph_at, memory=args.memory,
                                 strategies=args.strategies.split(","),
                                 max_overhead=10.0, max_batch=args.max_steps,
                                 time_limit_s=args.time_limit)
        print(f"searched in {time.monotonic() - started:.1f} s")
        memory = remat.resolve_size(args.memory, 0)
        for result in report.results:
            print(f"  {result.strategy}: longest sequence {result.max_batch * args.step}"
                  f"{' (certified)' if result.certified else ''}; next: "
                  f"{result.next.outcome if result.next else '-'}"
                  f" {result.next.reason if result.next else ''}")
            if result.strategy == "optimal" and not result.certified and result.next:
                # remat's own bounds do not count the tangents live beside a node that does
                # not read them; every program the backend emits holds them
                # (remat/torch/tangents.py): the next length, bounded that way.
                graph, fixed = graph_at(result.next.batch)
                least, proof = least_peak_bound(graph)
                verdict = "does not fit, proven" if least > memory - fixed else "undecided"
                print(f"    seq {result.next.batch * args.step}: {verdict}: every emitted "
                      f"program peaks at least {remat.format_bytes(least)} ({proof}), "
                      f"activations may use {remat.format_bytes(memory - fixed)}")
    print(f"largest resident memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
