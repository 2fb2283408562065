#!/usr/bin/env bash
# Executor benchmark (issue 6): predicted vs. measured activation peak and overhead of real
# libtorch training steps under three strategies, planned once with FLOP costs and once with a
# measured cost profile. Writes a Markdown table to stdout; raw JSON and profiles to $OUT.
# Usage: scripts/bench_exec.sh [steps]   (run after `make build`)
#   env MODELS="vgg16:4:64x64:90% ..." (model:batch:resolution:budget; VGG16's minimum peak
#   is 83% of its no-remat peak at that size; for the transformer the third field is the
#   sequence length, at GPT-2 small's other sizes),
#   STRATEGIES, THREADS (ATen threads, default 1), TIME_LIMIT (solver seconds, default 60),
#   COSTS ("flops profile", the plans to run: FLOP costs and the measured profile),
#   REPEATS (profile repeats, default 5).
set -euo pipefail
run=${REMAT_RUN:-build/src/cli/remat-run}
steps=${1:-3}
out=${OUT:-build/bench-exec}
models=${MODELS:-"vgg16:4:64x64:90% resnet50:4:64x64:70% unet:2:64x64:70%"}
strategies=${STRATEGIES:-"checkpoint-all chen-sqrtn optimal"}
threads=${THREADS:-1}
limit=${TIME_LIMIT:-60}
costs_list=${COSTS:-"flops profile"}
repeats=${REPEATS:-5}
mkdir -p "$out"

echo "| model | strategy | budget | predicted peak (zoo workspace) | measured peak | measured / predicted (largest transient) | predicted peak (profiled workspace) | FLOP plan: overhead predicted / measured | profiled plan: overhead predicted / measured | gradients vs autograd |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for spec in $models; do
  IFS=: read -r model batch res budget <<< "$spec"
  if [ "$model" = transformer ]; then
    common=(--model "$model" --batch "$batch" --seq-length "$res" --threads "$threads")
  else
    common=(--model "$model" --batch "$batch" --resolution "$res" --threads "$threads")
  fi
  profile="$out/$model.costs.json"
  case " $costs_list " in
    *" profile "*) "$run" profile "${common[@]}" --repeats "$repeats" -o "$profile" \
                     > "$out/$model.profile.txt" 2>&1 ;;
  esac
  for strategy in $strategies; do
    # checkpoint-all needs the whole no-remat peak; the others get the tight budget.
    b=$budget; [ "$strategy" = checkpoint-all ] && b=100%
    for costs in $costs_list; do
      extra=(); [ "$costs" = profile ] && extra=(--costs "$profile")
      "$run" train "${common[@]}" --budget "$b" --strategy "$strategy" --steps "$steps" \
        --check-gradients --time-limit "$limit" --json "${extra[@]}" \
        > "$out/$model.$strategy.$costs.json" 2> "$out/$model.$strategy.$costs.err" || true
    done
    /usr/bin/python3 - "$model" "$batch" "$res" "$strategy" "$b" "$out/$model.$strategy" <<'PY'
import json, sys
model, batch, res, strategy, budget, stem = sys.argv[1:]
def load(kind):
    try:
        return json.load(open(f"{stem}.{kind}.json"))
    except Exception:
        return None
flops, prof = load("flops"), load("profile")
name = f"{model} (batch {batch}, {res})"
if flops is None:
    err = open(f"{stem}.flops.err").read().strip().splitlines()
    print(f"| {name} | {strategy} | {budget} | no run: {err[-1] if err else '?'} | | | | | |")
    sys.exit()
mib = lambda b: f"{b / 2**20:.2f} MiB"
ratio = flops["measured_peak_bytes"] / max(flops["predicted_peak_bytes"], 1)
over = lambda d: f"{d['predicted_overhead']:.3f}x / {d['measured_overhead']:.3f}x" if d else "-"
profiled_peak = mib(prof["predicted_peak_bytes"]) if prof else "-"
grads = "bit-exact" if flops["max_abs_gradient_diff"] == 0 else (
    f"max diff {flops['max_abs_gradient_diff']:.2g}" if flops["gradients_match"] else "MISMATCH")
print(f"| {name} | {flops['strategy']} | {budget} ({mib(flops['budget_bytes'])}) | "
      f"{mib(flops['predicted_peak_bytes'])} | {mib(flops['measured_peak_bytes'])} | "
      f"{ratio:.3f} ({flops['largest_transient_node']}) | {profiled_peak} | {over(flops)} | "
      f"{over(prof)} | {grads} |")
PY
  done
done
