#!/usr/bin/env bash
# Solver benchmark (issue 4): time to proven optimality for linear(n) and the paper's networks,
# LP-rounding time and cost ratio. Writes a Markdown table to stdout; raw JSON to $OUT.
# Usage: scripts/bench_solvers.sh [time_limit_s] [threads]   (run after `make build`)
set -euo pipefail
remat=${REMAT:-build/src/cli/remat}
limit=${1:-120}
threads=${2:-2}
out=${OUT:-build/bench-solvers}
mkdir -p "$out"

run() {  # name, graph args..., budget
  local name=$1; shift
  local file="$out/$name.json"
  "$remat" solve "$@" --strategy approx,optimal --time-limit "$limit" --threads "$threads" \
    --quiet --json > "$file" 2> "$out/$name.err" || true
  /usr/bin/python3 - "$name" "$file" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
try:
    doc = json.load(open(path))
except Exception as e:
    print(f"| {name} | error: {e} | | | | | |"); sys.exit()
rows = {r["strategy"]: r for r in doc["results"]}
opt, apx = rows.get("optimal", {}), rows.get("approx", {})
lb = doc.get("lower_bound_cost")
def cost(r): return r.get("cost")
status = opt.get("solver_status", opt.get("status"))
ratio = (cost(apx) / cost(opt)) if cost(apx) and cost(opt) and apx.get("status") == "fits" else None
print(f"| {name} | {doc['budget_bytes']} | {status} | {opt.get('solve_time_s', 0):.1f} | "
      f"{opt.get('overhead', float('nan')):.3f} | "
      f"{(opt.get('gap_to_lower_bound') or 0)*100:.1f}% | "
      f"{apx.get('solve_time_s', 0):.2f} | {apx.get('status')} | "
      f"{'%.3f' % ratio if ratio else '-'} |")
PY
}

echo "| instance | budget B | optimal status | optimal s | overhead | gap to LP | approx s | approx | approx/optimal |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in 8 16 24 32; do
  "$remat" graph linear "$n" -o "$out/linear$n.graph.json" > /dev/null
  for pct in 40 60; do run "linear($n)@$pct%" --graph "$out/linear$n.graph.json" --budget "$pct%"; done
done
run "linear(16)@6B" --graph "$out/linear16.graph.json" --budget 6
run "linear(24)@8B" --graph "$out/linear24.graph.json" --budget 8
for model in ${MODELS:-vgg16 vgg19 unet fcn8 segnet mobilenet resnet50}; do
  for pct in 70 80 90; do run "$model@$pct%" --model "$model" --budget "$pct%"; done
done
