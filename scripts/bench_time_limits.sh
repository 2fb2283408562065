#!/usr/bin/env bash
# Do strategies keep --time-limit? Runs every strategy with a short limit on ResNet50 and on a
# 1,000-node random layered DAG at 50-90% of the no-remat peak and prints, per strategy, the
# longest time it took (from solve --json) and its ratio to the limit, plus the whole command's
# wall time. Usage: scripts/bench_time_limits.sh [BUILD_DIR] [TIME_LIMIT_S]
set -euo pipefail
build=${1:-build}; limit=${2:-5}
remat="$build/src/cli/remat"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$remat" graph random-layered --seed 1 -o "$tmp/rl1.json" > /dev/null
for src in "--model resnet50" "--graph $tmp/rl1.json"; do
  for f in 50 60 70 80 90; do
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$remat" solve $src --budget "$f%" --time-limit "$limit" --json --quiet > "$tmp/$f.json" 2> /dev/null || true
    end=$(date +%s.%N)
    python3 -c "import json,sys; d=json.load(open('$tmp/$f.json')); d['wall_s']=$end-$start; json.dump(d, open('$tmp/$f.json','w'))"
  done
  python3 - "$limit" "$src" "$tmp" <<'PY'
import json, sys, glob
limit, src, tmp = float(sys.argv[1]), sys.argv[2], sys.argv[3]
worst, walls = {}, []
for path in sorted(glob.glob(f"{tmp}/[0-9]*.json")):
    doc = json.load(open(path))
    walls.append(doc["wall_s"])
    for row in doc["results"]:
        worst[row["strategy"]] = max(worst.get(row["strategy"], 0.0), row["solve_time_s"])
name = src.split()[-1].split("/")[-1]
print(f"\n{name}, --time-limit {limit:g}: longest strategy time over 5 budgets")
print("| strategy | longest s | / limit |")
print("|---|---|---|")
for s, t in worst.items():
    print(f"| {s} | {t:.2f} | {t / limit:.2f} |")
print(f"whole `solve` (bound + all strategies): {min(walls):.1f}-{max(walls):.1f} s")
PY
  rm -f "$tmp"/[0-9]*.json
done
