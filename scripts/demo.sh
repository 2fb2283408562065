#!/usr/bin/env bash
# The demo: every baseline strategy compared on a built-in example graph.
set -euo pipefail
remat=${1:-build/src/cli/remat}
out=build/demo
mkdir -p "$out"
"$remat" graph linear 32 -o "$out/linear32.json" >/dev/null
echo "== remat graph info (the paper's linear benchmark graph, 32 layers)"
"$remat" graph info "$out/linear32.json"
echo
echo "== remat solve --budget 40% --strategy all"
"$remat" solve --graph "$out/linear32.json" --budget 40% --strategy all
