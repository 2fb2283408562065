#!/usr/bin/env bash
# Issue 12's proof-speed check: `optimal` on the instances proven before, run with an older and
# a newer remat one after the other (same machine, same load), with the status, the whole
# command's time and the ratio new/old. Prints a Markdown table.
# Usage: scripts/bench_proofs.sh OLD_REMAT NEW_REMAT [TIME_LIMIT_S] [THREADS]
# GAP=1e-4 passes --gap to both (the default gap target moved from 1e-4 to 1e-3 in issue 26).
set -euo pipefail
old=$1; new=$2; limit=${3:-120}; threads=${4:-2}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for n in 8 16 24; do "$new" graph linear "$n" -o "$tmp/linear$n.json" > /dev/null; done

run() {  # binary, output file, source args..., budget
  local bin=$1 out=$2; shift 2
  local start end
  start=$(date +%s.%N)
  "$bin" solve "$@" --strategy optimal --time-limit "$limit" --threads "$threads" ${GAP:+--gap "$GAP"} --json --quiet \
    > "$out" 2> /dev/null || true
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
}

echo "| instance | old status | old s | new status | new s | new/old | cost old / new |"
echo "|---|---|---|---|---|---|---|"
row() {  # name, source args..., budget
  local name=$1; shift
  local t_old t_new
  t_old=$(run "$old" "$tmp/old.json" "$@")
  t_new=$(run "$new" "$tmp/new.json" "$@")
  python3 - "$name" "$tmp/old.json" "$tmp/new.json" "$t_old" "$t_new" <<'PY'
import json, sys
name, a, b, ta, tb = sys.argv[1:]
def read(path):
    try:
        r = {x["strategy"]: x for x in json.load(open(path))["results"]}["optimal"]
        return r.get("solver_status", "?"), r.get("cost")
    except Exception as e:
        return f"error ({e.__class__.__name__})", None
sa, ca = read(a); sb, cb = read(b)
print(f"| {name} | {sa} | {float(ta):.2f} | {sb} | {float(tb):.2f} | {float(tb) / float(ta):.2f} | {ca} / {cb} |")
PY
}

for n in 8 16 24; do
  for pct in 40 60; do row "linear($n)@$pct%" --graph "$tmp/linear$n.json" --budget "$pct%"; done
done
row "linear(16)@6B" --graph "$tmp/linear16.json" --budget 6
row "linear(24)@8B" --graph "$tmp/linear24.json" --budget 8
row "linear(16)@4B" --graph "$tmp/linear16.json" --budget 4
for inst in vgg16@90 vgg19@80 vgg19@90 fcn8@80 fcn8@90 segnet@70 segnet@80 segnet@90 unet@60; do
  row "${inst}%" --model "${inst%@*}" --budget "${inst#*@}%"
done
