#!/usr/bin/env bash
# Regenerates every table of docs/BENCHMARKS.md: runs each table's command in turn, in the
# order of that file, and writes each one's output to OUT_DIR/NAME.txt (its stderr to
# NAME.err; JSON, plots and saved graphs beside them). Stops at the first command that fails
# and names it. Takes hours on a 2-core machine (the Python benchmarks and the 30-120 s solver
# limits dominate); `make bench` runs it after `make build`.
# Usage: scripts/bench_all.sh [OUT_DIR]   (default bench-results/)
#   env BUILD (default build), PYTHON (default .venv/bin/python).
# The GPU table runs only where torch sees a CUDA device; elsewhere it is skipped (and said so).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-results}
build=${BUILD:-build}
python=${PYTHON:-.venv/bin/python}
remat=$build/src/cli/remat
remat_run=$build/src/cli/remat-run
mkdir -p "$out"

step() {  # name, command...: stdout to $out/name.txt, stderr to $out/name.err
  local name=$1; shift
  local start
  start=$(date +%s)
  echo "== $name: $*"
  if ! "$@" > "$out/$name.txt" 2> "$out/$name.err"; then
    echo "bench_all.sh: '$name' failed: $* (its stderr: $out/$name.err)" >&2
    exit 1
  fi
  echo "   done in $(( $(date +%s) - start )) s"
}

# Commands of several runs, each stopping at its first failure.
maxbatch_device() {  # the paper's max batch on 16e9 bytes with a V100 preset's workspace
  local m o
  for m in vgg19 mobilenet unet; do
    for o in sgd adam; do
      echo "## $m, $o"
      "$remat" maxbatch --model "$m" --device v100-16gb --memory 16e9 --optimizer "$o" \
        --strategies checkpoint-all,griewank,evict,local-search,optimal --time-limit 30 \
        --threads 1 --quiet --plot "$out/maxbatch_${m}_$o.svg" || return 1
    done
  done
}
maxbatch_paper() {  # the paper's accounting (no workspace), VGG19
  local o
  for o in sgd adam; do
    echo "## vgg19, $o, --workspace none"
    "$remat" maxbatch --model vgg19 --memory 16GB --optimizer "$o" --workspace none \
      --strategies checkpoint-all,griewank,evict,local-search,optimal --time-limit 30 \
      --threads 1 --quiet || return 1
  done
}
evict_chain() {  # evict on the 200,001-node chain
  "$remat" graph linear 100000 -o "$out/linear100000.json" > /dev/null || return 1
  "$remat" solve --graph "$out/linear100000.json" --strategy evict --budget 50% \
    --time-limit 10 --quiet || return 1
  rm -f "$out/linear100000.json"
}
workspace_steps() {  # predicted against measured activation peaks, estimated and measured workspace
  local row model batch res budget strategy flag
  for row in vgg16:2:32x32:100%:checkpoint-all vgg16:2:64x64:100%:checkpoint-all \
             vgg16:2:224x224:100%:checkpoint-all resnet50:8:32x32:100%:checkpoint-all \
             resnet50:8:64x64:100%:checkpoint-all resnet50:8:64x64:60%:local-search \
             resnet50:2:224x224:100%:checkpoint-all mobilenet:8:32x32:100%:checkpoint-all \
             mobilenet:8:64x64:100%:checkpoint-all mobilenet:2:224x224:100%:checkpoint-all; do
    IFS=: read -r model batch res budget strategy <<< "$row"
    for flag in "" --measured-workspace; do
      echo "## $model batch $batch $res $budget $strategy $flag"
      "$remat_run" step --model "$model" --batch "$batch" --resolution "$res" --budget "$budget" \
        --strategy "$strategy" --threads 1 --quiet --json $flag || return 1
    done
  done
}
compiled() {  # the issue-33 benchmark, three rounds of 21 alternating steps, then its tables
  "$python" scripts/bench_compiled.py --models vit,unet,gru,gpt2,llama \
    --fractions 1,0.7,0.5,0.3 --steps 21 --rounds 3 --strategy optimal --time-limit 30 \
    --skip-resnet --no-eager-path --out "$out/compiled.json" || return 1
  "$python" scripts/bench_compiled.py --table "$out/compiled.json"
}

# 1. Solvers (docs/BENCHMARKS.md, "Solvers on Checkmate's MILP").
step proofs env GAP=1e-4 scripts/bench_proofs.sh "$remat" "$remat" 120 1
step optimal scripts/bench_optimal.sh "$remat" "$remat" tests/cli/data/captures 60
step solvers env OUT="$out/solvers" REMAT="$remat" scripts/bench_solvers.sh 30 2

# 2. The paper's networks.
step scale scripts/bench_scale.sh "$build" 30
step sweep_unet "$remat" sweep --model unet --device v100-16gb --points 10 --time-limit 30 \
  --threads 1 --quiet --json --plot "$out/sweep_unet.svg"
step sweep_vgg16 "$remat" sweep --model vgg16 --device v100-16gb --points 10 --time-limit 30 \
  --threads 1 --quiet --json --plot "$out/sweep_vgg16.svg"
step maxbatch maxbatch_device
step maxbatch_paper maxbatch_paper

# 3. Under torch.compile: remat, plain torch.compile and PyTorch's knob.
step compiled compiled
step compiled_vocab "$python" scripts/bench_compiled.py --models gpt2-50k,llama-32k \
  --fractions 1,0.7,0.5,0.3 --steps 5 --strategy optimal --time-limit 30 --skip-resnet \
  --no-eager-path --out "$out/compiled_vocab.json"
step compiled_gru_nodropout "$python" scripts/bench_compiled.py --models gru \
  --fractions 1,0.7,0.5,0.3 --steps 21 --dropout 0 --strategy optimal --time-limit 30 \
  --skip-resnet --no-eager-path --out "$out/compiled_gru_nodropout.json"

# 4. Deep transformers.
step transformers_depth "$python" scripts/bench_transformers.py --depths 24,32,80 \
  --models gpt2,llama --out "$out/transformers_depth.json" --graphs "$out/graphs_depth"
step transformers_1024_aot "$python" scripts/bench_transformers.py --depths 24 \
  --models gpt2,llama --width 1024 --heads 16 --seq 256 --batch 2 --compiler aot_eager \
  --out "$out/transformers_1024_aot.json"
step transformers_1024_inductor "$python" scripts/bench_transformers.py --depths 24 \
  --models gpt2,llama --width 1024 --heads 16 --seq 256 --batch 2 --compiler inductor \
  --out "$out/transformers_1024_inductor.json"

# 5. An LLM's size from meta tensors.
step llama8b_plan "$python" scripts/plan_llama8b.py --plan-seq 4096
step llama8b_longest "$python" scripts/plan_llama8b.py --time-limit 30
step llama8b_chunks_longest "$python" scripts/plan_llama8b.py --chunks 32 --time-limit 30
step llama8b_chunks_plan "$python" scripts/plan_llama8b.py --plan-seq 27648 --chunks 32 \
  --time-limit 30

# 6. Limits and scale.
step core "$build/bench/remat_bench" --benchmark_min_time=0.2
step time_limits python3 scripts/bench_time_limits.py --build "$build" --json "$out/time_limits.json"
step time_limits_beside_make python3 scripts/bench_time_limits.py --build "$build" --beside-make \
  --json "$out/time_limits_beside_make.json"
step large_chain scripts/bench_large_chain.sh "$build" 10000 50000
step evict_chain evict_chain
step min_budget scripts/bench_min_budget.sh "$remat" 30 120 2
step ctrl_c "$python" scripts/ctrl_c_latency.py --runs 20 --seed 2

# 7. Fidelity: predicted against measured peaks.
step exec env OUT="$out/exec" REMAT_RUN="$remat_run" \
  MODELS="vgg16:8:224x224:70% resnet50:8:224x224:70% unet:8:224x224:70% transformer:1:128:70%" \
  THREADS=1 REPEATS=3 TIME_LIMIT=30 scripts/bench_exec.sh 4
step workspace workspace_steps
step device_peaks_cpu "$python" scripts/bench_device_peaks.py --device cpu --models gpt2,llama \
  --layers 24 --width 512 --heads 8 --batch 4 --seq 512 --budgets 50%,30% \
  --compilers inductor,aot_eager --time-limit 10 --steps 3 --out "$out/device_peaks_cpu.jsonl"
if "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null; then
  step device_peaks_gpu "$python" scripts/bench_device_peaks.py --device cuda \
    --compilers aot_eager --batch 8 --seq 1024 --steps 3 --out "$out/device_peaks_gpu.jsonl"
else
  echo "== device_peaks_gpu: skipped (torch sees no CUDA device)"
fi

echo "bench_all.sh: every table's output is in $out/"
