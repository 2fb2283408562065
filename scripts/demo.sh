#!/usr/bin/env bash
# The demo: every strategy on VGG16 at batch 256 against a 16 GiB device (Adam), the main job
# remat does: fit a training step into a device at the least extra compute.
set -euo pipefail
remat=${1:-build/src/cli/remat}
echo "== remat zoo list"
"$remat" zoo list
echo
echo "== remat solve --model vgg16 --batch 256 --device v100-16gb --optimizer adam"
status=0
"$remat" solve --model vgg16 --batch 256 --device v100-16gb --optimizer adam --time-limit 60 || status=$?
# Exit code 1 means no strategy fit the budget: a result, not a failure of the demo.
[ "$status" -le 1 ]
