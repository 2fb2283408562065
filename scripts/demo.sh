#!/usr/bin/env bash
# The demo: every strategy on U-Net at batch 32 (416x608) against a 16 GiB device (Adam), the
# main job remat does: fit a training step into a device at the least extra compute. (VGG16,
# the demo before workspace was counted, cannot be rematerialized at 224x224: its minimum peak
# is its no-remat peak, docs/BENCHMARKS.md.)
set -euo pipefail
remat=${1:-build/src/cli/remat}
echo "== remat zoo list"
"$remat" zoo list
echo
echo "== remat solve --model unet --batch 32 --device v100-16gb --optimizer adam"
status=0
"$remat" solve --model unet --batch 32 --device v100-16gb --optimizer adam --time-limit 60 || status=$?
# Exit code 1 means no strategy fit the budget: a result, not a failure of the demo.
[ "$status" -le 1 ]
