# remat: `make demo` and `make test` set everything up on a fresh Debian 12 machine.
JOBS ?= $(shell nproc)
# The build's own progress lines only, not every sub-make's "Entering directory".
MAKEFLAGS += --no-print-directory
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= graph_json node_link_json cost_profile schedule_json onnx
REMAT := $(BUILD)/src/cli/remat
VENV ?= .venv
PYTHON := $(CURDIR)/$(VENV)/bin/python
# The Python binding is built against the virtual environment's interpreter and pybind11.
PYTHON_FLAGS = -DREMAT_PYTHON=ON -DPython_EXECUTABLE=$(PYTHON) \
  -Dpybind11_DIR=$$($(PYTHON) -m pybind11 --cmakedir)

.PHONY: all deps venv configure build build-demo build-asan demo test test-fast test-asan test-python test-long pip-check bench fuzz fuzz-run clean

all: build

deps:
	./scripts/install-deps.sh

# A virtual environment with the pinned packages of python/requirements.txt; a .pth file puts
# python/ on its path, so `import remat` uses the source tree and the module built beside it.
$(VENV)/.installed: python/requirements.txt
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r python/requirements.txt
	echo "$(CURDIR)/python" > "$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/remat-source.pth"
	touch $@

venv: $(VENV)/.installed

# Configured on every build, so that an older build folder also gets the Python binding.
configure: deps venv
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(PYTHON_FLAGS) > /dev/null

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Only what the demo runs: the remat program and the Python binding (no tests, benchmarks or
# remat-run), so that a fresh machine reaches its first table sooner.
build-demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target remat remat_python_core

$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DREMAT_SANITIZE=ON

build-asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)

demo: build-demo
	./scripts/demo.sh $(REMAT)
	@echo; echo "== PyTorch: examples/train_resnet.py (remat.torch.wrap: a ResNet-18-style model trained in your own loop at half its activation peak)"
	$(PYTHON) examples/train_resnet.py --steps 2 --time-limit 10
	@echo; echo "== PyTorch: a transformers GPT-2 (2 layers) trained under plain torch.compile, PyTorch's activation_memory_budget and remat's backend at 70% and 50%"
	$(PYTHON) scripts/bench_compiled.py --models lm --fractions 0.7,0.5 --steps 5 \
	  --strategy optimal --time-limit 20 --skip-resnet --no-eager-path --summary

# Unit, property and golden CLI tests, the Python package's tests, then the C++ suite under
# ASan + UBSan. The suites named *LongTest (oracles and bounds checked against exact optima on
# many tiny graphs, a time limit on a long chain) take minutes each under the sanitizers: `make
# test` runs them in the normal build only, and `make test-long` runs them under ASan + UBSan.
# Run `make test-long` before changing the solvers, the bounds or the simulator.
LONG_TESTS := LongTest\.
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
test: test-fast test-python test-asan

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) -E '$(LONG_TESTS)'

test-long: build-asan
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) -R '$(LONG_TESTS)'

# CI=1 as CI sets it: Inductor is stricter there (it refuses a fallback kernel for an operator
# that has a decomposition), so a local run fails where CI would.
test-python: build
	cd python && CI=$${CI:-1} REMAT_BIN_DIR=$(CURDIR)/$(BUILD)/src/cli $(PYTHON) -m pytest -q tests

# `pip install .` as a user runs it (pyproject.toml, docs/python.md): into a fresh virtual
# environment in a temporary folder, then `import remat` from outside the tree. Slow (the C++
# core compiles again, in a temporary build folder), so not part of `make test`. Extra pip
# options go in PIP_CHECK_FLAGS, e.g.
# --config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
PIP_CHECK_FLAGS ?=
pip-check: deps
	set -e; scratch=$$(mktemp -d); trap 'rm -rf "$$scratch"' EXIT; \
	python3 -m venv "$$scratch/venv"; \
	"$$scratch/venv/bin/pip" install --disable-pip-version-check $(PIP_CHECK_FLAGS) "$(CURDIR)"; \
	cd "$$scratch" && "$$scratch/venv/bin/python" -c \
	  'import remat; print(remat._core.__file__); print(remat.strategy_names())'

# Every table of docs/BENCHMARKS.md, each command's output in bench-results/ (hours).
bench: build
	BUILD=$(BUILD) PYTHON=$(PYTHON) ./scripts/bench_all.sh

# libFuzzer targets (docs/fuzzing.md), never part of `make test`: clang and compiler-rt are
# installed, build-fuzz is configured with clang and every fuzzer is built.
fuzz: deps
	./scripts/install-fuzz-deps.sh
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DREMAT_FUZZ=ON -DREMAT_BENCH=OFF > /dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target remat_fuzzers

# Runs each fuzzer in turn for FUZZ_SECONDS on a scratch copy of its seed corpus (the committed
# seeds in fuzz/corpus/<target>/, tests/onnx/data for onnx, stay as they are); logs, grown
# corpora and any crash inputs go to $(FUZZ_BUILD)/runs/<target>/, emptied first. Stops at the
# first fuzzer that finds something.
fuzz-run: fuzz
	set -e; for target in $(FUZZ_TARGETS); do \
	  run=$(FUZZ_BUILD)/runs/$$target; rm -rf $$run; mkdir -p $$run/corpus; \
	  if [ $$target = onnx ]; then seeds=tests/onnx/data; else seeds=fuzz/corpus/$$target; fi; \
	  cp $$seeds/* $$run/corpus/; \
	  echo "== $$target: $(FUZZ_SECONDS) s, log in $$run/log"; \
	  $(FUZZ_BUILD)/fuzz/remat_$${target}_fuzzer -max_total_time=$(FUZZ_SECONDS) \
	    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=$$run/ $$run/corpus \
	    > $$run/log 2>&1 || { tail -n 40 $$run/log; exit 1; }; \
	  grep -E '^#[0-9]+.*DONE|^stat::' $$run/log; \
	done

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) python/remat/_core*.so
