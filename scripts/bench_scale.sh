#!/usr/bin/env bash
# Issue 11's scale benchmark: every zoo model, the ONNX DenseNet-121 and random layered DAGs of
# 1,000 nodes at 50-90% of the no-remat peak. One `remat solve --json` per row; prints a
# Markdown table (best baseline, evict, local-search, optimal, bound, gap, wall time) to stdout.
# Usage: scripts/bench_scale.sh [BUILD_DIR] [TIME_LIMIT_S] [MODELS...]
set -euo pipefail
build=${1:-build}; limit=${2:-10}; shift $(( $# > 2 ? 2 : $# )) || true
remat="$build/src/cli/remat"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=(vgg16 vgg19 resnet50 mobilenet unet fcn8 segnet transformer densenet121 rl1 rl2 rl3 rl4 rl5)
fi
strategies_training=checkpoint-all,chen-sqrtn-ap,chen-sqrtn-linear,chen-greedy-ap,chen-greedy-linear,griewank-logn,griewank,evict,local-search,optimal
echo "| graph | nodes | budget | best baseline | evict | local-search | optimal | bound (source) | gap | solve s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
  case $m in
    rl*) "$remat" graph random-layered --seed "${m#rl}" -o "$tmp/$m.json" > /dev/null
         src=(--graph "$tmp/$m.json"); strategies=checkpoint-all,evict,local-search,optimal ;;
    densenet121) src=(--onnx tests/onnx/data/densenet121.onnx --batch 32); strategies=$strategies_training ;;
    *) src=(--model "$m"); strategies=$strategies_training ;;
  esac
  for f in 50 60 70 80 90; do
    start=$(date +%s.%N)
    "$remat" solve "${src[@]}" --budget "$f%" --strategy "$strategies" --time-limit "$limit" \
      --threads 2 --json --quiet > "$tmp/out.json" 2> /dev/null || true
    end=$(date +%s.%N)
    python3 - "$tmp/out.json" "$m" "$f" "$start" "$end" <<'PY'
import json, sys
path, model, f, start, end = sys.argv[1:]
try:
    doc = json.load(open(path))
except Exception:
    print(f"| {model} | - | {f}% | (no output) | | | | | | |"); sys.exit()
rows = {r["strategy"]: r for r in doc["results"]}
fits = lambda r: r.get("status") == "fits"
def ov(name):
    r = rows.get(name)
    return f'{r["overhead"]:.3f}x' if r and fits(r) else ("over" if r and "overhead" in r else "-")
baselines = [r for n, r in rows.items() if n not in ("evict", "local-search", "optimal") and fits(r)]
best = min(baselines, key=lambda r: r["cost"], default=None)
bb = f'{best["overhead"]:.3f}x ({best["strategy"]})' if best else "none fits"
bound = doc.get("lower_bound_cost")
winners = [r for r in doc["results"] if fits(r)]
top = min(winners, key=lambda r: r["cost"], default=None)
gap = f'{100 * max(0.0, top["cost"] - bound) / top["cost"]:.1f}%' if top and bound else "-"
bstr = f'{bound / doc["no_remat_cost"]:.3f}x ({doc.get("lower_bound_source")})' if bound else "none"
print(f'| {model} | {doc["graph"]["nodes"]} | {f}% | {bb} | {ov("evict")} | {ov("local-search")} | {ov("optimal")} | {bstr} | {gap} | {float(end) - float(start):.1f} |')
PY
  done
done
