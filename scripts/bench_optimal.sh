#!/usr/bin/env bash
# Issue 26's acceptance, measured in one run (docs/BENCHMARKS.md, "Solvers on Checkmate's MILP:
# proofs and time"): whole-command wall times of local-search and optimal (old and new remat) on the zoo at
# 50% and on the PyTorch captures at 30/50/70%, --budget min on the zoo, the captures and five
# random layered DAGs, approx on Checkmate's VGG16 below (1 - eps) of its minimum peak, and the
# U-Net instance where optimal lost to approx. Prints Markdown tables.
# Usage: scripts/bench_optimal.sh OLD_REMAT NEW_REMAT [CAPTURES_DIR] [TIME_LIMIT_S]
# The old remat runs on the zoo only, unless SKIP_OLD_CAPTURES=0.
set -euo pipefail
old=$1; new=$2; captures=${3:-tests/cli/data/captures}; limit=${4:-60}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

timed() {  # output file, command...: runs it, prints its wall seconds
  local out=$1; shift
  local start end
  start=$(date +%s.%N)
  "$@" --json --quiet > "$out" 2> /dev/null || true
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
}

field() {  # json file, strategy: "cost|stop_reason|verdict"
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
    row = {r["strategy"]: r for r in doc["results"]}[sys.argv[2]]
    cost = row.get("cost")
    print(f"{cost:.6g}" if cost is not None else "-", row.get("stop_reason", "-"),
          row.get("verdict", "-"), sep="|")
except Exception as e:
    print(f"error ({e.__class__.__name__})|-|-")
PY
}

echo "### optimal against local-search (whole command, --time-limit $limit)"
echo
echo "| instance | local-search s | optimal s (old) | optimal s (new) | new / local-search | cost local-search / old / new | new stop reason |"
echo "|---|---|---|---|---|---|---|"
compare() {  # name, source args...
  local name=$1; shift
  local t_ls t_old t_new
  t_ls=$(timed "$tmp/ls.json" "$new" solve "$@" --strategy local-search --time-limit "$limit")
  if [ "${SKIP_OLD_CAPTURES:-1}" = 1 ] && [[ "$name" == *capture* ]]; then
    echo '{"results": []}' > "$tmp/old.json"; t_old="-"  # the old binary has no captures row
  else
    t_old=$(timed "$tmp/old.json" "$old" solve "$@" --strategy optimal --time-limit "$limit")
  fi
  t_new=$(timed "$tmp/new.json" "$new" solve "$@" --strategy optimal --time-limit "$limit")
  IFS='|' read -r c_ls _ _ <<< "$(field "$tmp/ls.json" local-search)"
  IFS='|' read -r c_old _ _ <<< "$(field "$tmp/old.json" optimal)"
  IFS='|' read -r c_new why _ <<< "$(field "$tmp/new.json" optimal)"
  ratio=$(python3 -c "print(f'{$t_new / max($t_ls, 0.01):.2f}')")
  echo "| $name | $t_ls | $t_old | $t_new | $ratio | $c_ls / $c_old / $c_new | $why |"
}
for m in mobilenet resnet50 transformer; do compare "$m @ 50%" --model "$m" --budget 50%; done
for c in vit unet gru; do
  for pct in 30 50 70; do compare "$c capture @ $pct%" --graph "$captures/$c.json" --budget "$pct%"; done
done

echo
echo "### --budget min (local-search at the smallest budget, --time-limit 30, no cost bound)"
echo
echo "| graph | no-remat peak | smallest budget found | % of no-remat | lower bound | bound source | gap | s |"
echo "|---|---|---|---|---|---|---|---|"
smallest() {  # name, source args...
  local name=$1; shift
  local t
  t=$(timed "$tmp/min.json" "$new" solve "$@" --budget min --strategy local-search \
        --time-limit 30 --no-lower-bound)
  python3 - "$tmp/min.json" "$name" "$t" <<'PY'
import json, sys
path, name, t = sys.argv[1:]
try:
    d = json.load(open(path)); m = d["min_budget"]; peak = d["no_remat_peak_bytes"]
    print(f"| {name} | {peak} | {m['peak_bytes']} | {100 * m['peak_bytes'] / peak:.1f}% | "
          f"{m['lower_bound_bytes']} | {m['bound_source']} | {100 * m['gap']:.1f}% | {t} |")
except Exception as e:
    print(f"| {name} | error ({e.__class__.__name__}) | | | | | | {t} |")
PY
}
for m in vgg16 vgg19 resnet50 mobilenet unet fcn8 segnet transformer; do smallest "$m" --model "$m"; done
for c in vit unet gru; do smallest "$c capture" --graph "$captures/$c.json"; done
for seed in 1 2 3 4 5; do
  "$new" graph random-layered --nodes 200 --width 8 --edges 800 --seed "$seed" \
    -o "$tmp/dag$seed.json" > /dev/null
  smallest "random layered 200 (seed $seed)" --graph "$tmp/dag$seed.json"
done

echo
echo "### approx where (1 - eps) of the budget is below the minimum peak (VGG16, --workspace none)"
echo
echo "| budget | old approx | new approx | new optimal |"
echo "|---|---|---|---|"
for b in 13.5e9 14.5e9; do
  timed "$tmp/old.json" "$old" solve --model vgg16 --workspace none --budget "$b" \
    --strategy approx --time-limit "$limit" > /dev/null
  timed "$tmp/new.json" "$new" solve --model vgg16 --workspace none --budget "$b" \
    --strategy approx,optimal --time-limit "$limit" > /dev/null
  IFS='|' read -r a_old _ _ <<< "$(field "$tmp/old.json" approx)"
  IFS='|' read -r a_new _ _ <<< "$(field "$tmp/new.json" approx)"
  IFS='|' read -r o_new _ _ <<< "$(field "$tmp/new.json" optimal)"
  echo "| $b | $a_old | $a_new | $o_new |"
done

echo
echo "### U-Net at 16404740579 B, --time-limit 20, all strategies"
echo
for bin in "$old" "$new"; do
  t=$(timed "$tmp/u.json" "$bin" solve --model unet --budget 16404740579 --time-limit 20)
  IFS='|' read -r a _ _ <<< "$(field "$tmp/u.json" approx)"
  IFS='|' read -r o why _ <<< "$(field "$tmp/u.json" optimal)"
  echo "- $( [ "$bin" = "$old" ] && echo old || echo new ): approx $a, optimal $o ($why), whole command $t s"
done
