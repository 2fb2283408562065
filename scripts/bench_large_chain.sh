#!/usr/bin/env bash
# Large graphs in near-linear time: the paper's linear(N) training chain with N forward layers
# (2N+1 nodes; checkpoint-all holds about N^2/4 values-by-stages, which a dense schedule
# would store as bits). Times `remat graph info` and each baseline via `remat solve` at 50% of
# the no-remat peak, wall time and peak RSS per command, and reports each as a ratio to
# `graph info` measured in the same run (machines are shared; ratios travel better).
# Usage: scripts/bench_large_chain.sh [BUILD_DIR] [N ...]   (default N: 10000 25000 50000)
set -euo pipefail
build=${1:-build}; shift || true
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(10000 25000 50000)
remat="$build/src/cli/remat"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
measure() {  # prints "seconds max_rss_kb" of the command
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null 2>&1 || true
  cat "$tmp/time" | tail -1
}
echo "| nodes | command | wall s | / graph info | peak RSS MB |"
echo "|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  "$remat" graph linear "$n" -o "$tmp/chain.json" > /dev/null
  nodes=$((2 * n + 1))
  read -r base rss < <(measure "$remat" graph info "$tmp/chain.json")
  echo "| $nodes | graph info | $base | 1.0 | $((rss / 1024)) |"
  for s in checkpoint-all chen-sqrtn-linear chen-greedy-linear griewank-logn griewank; do
    read -r wall rss < <(measure "$remat" solve --graph "$tmp/chain.json" --strategy "$s" \
                           --budget 50% --time-limit 10 --quiet)
    ratio=$(python3 -c "print(f'{$wall / max($base, 0.01):.1f}')")
    echo "| $nodes | solve $s | $wall | $ratio | $((rss / 1024)) |"
  done
done
