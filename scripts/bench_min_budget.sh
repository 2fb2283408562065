#!/usr/bin/env bash
# `--budget min` (issue 35, item 6): the least peak found, its certified bound and the ratio
# between them, on the zoo models and on random layered DAGs of 200 nodes (width 8, 800 edges)
# and 1,000 nodes (the paper's RL graphs, `remat graph random-layered`'s defaults). One
# `remat solve --budget min` per row; prints a Markdown table.
# Usage: scripts/bench_min_budget.sh REMAT [ZOO_LIMIT_S] [RL1000_LIMIT_S] [THREADS]
set -euo pipefail
remat=$1; zoo_limit=${2:-30}; rl_limit=${3:-120}; threads=${4:-2}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

echo "| graph | no-remat peak | least peak found | % of no-remat | lower bound | bound source | found / bound | s |"
echo "|---|---|---|---|---|---|---|---|"
row() {  # name, time limit, source args...
  local name=$1 limit=$2; shift 2
  local start end
  start=$(date +%s.%N)
  "$remat" solve "$@" --budget min --strategy local-search --no-lower-bound --time-limit "$limit" \
    --threads "$threads" --json --quiet > "$tmp/out.json" 2> /dev/null || true
  end=$(date +%s.%N)
  python3 - "$name" "$tmp/out.json" "$start" "$end" <<'PY'
import json, sys
name, path, start, end = sys.argv[1:]
try:
    d = json.load(open(path)); m = d["min_budget"]
except Exception as e:
    print(f"| {name} | error ({e.__class__.__name__}) | | | | | | |"); sys.exit()
nr, peak, lb = d["no_remat_peak_bytes"], m["peak_bytes"], m["lower_bound_bytes"]
print(f"| {name} | {nr} | {peak} | {100 * peak / nr:.1f}% | {lb} | {m['bound_source']} | "
      f"{peak / lb:.3f} | {float(end) - float(start):.1f} |")
PY
}

for model in vgg16 vgg19 resnet50 mobilenet unet fcn8 segnet transformer; do
  row "$model" "$zoo_limit" --model "$model"
done
for seed in 1 2 3 4 5; do
  "$remat" graph random-layered --nodes 200 --width 8 --edges 800 --seed "$seed" -o "$tmp/rl200.json" > /dev/null
  row "random layered 200 (seed $seed)" "$zoo_limit" --graph "$tmp/rl200.json"
done
for seed in 1 2 3 4 5; do
  "$remat" graph random-layered --seed "$seed" -o "$tmp/rl1000.json" > /dev/null
  row "RL1000 (seed $seed)" "$rl_limit" --graph "$tmp/rl1000.json"
done
