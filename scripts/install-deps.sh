#!/usr/bin/env bash
# Installs the Debian 12 packages remat needs, skipping those already installed.
# Idempotent; runs apt-get as root directly or through sudo.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  coinor-libcbc-dev coinor-libclp-dev
  libonnx-dev libprotobuf-dev
  gnuplot-nox
  libtorch-dev
  # Debian's libtorch calls whatever libblas.so.3 the alternatives system points at; without
  # this package that is the reference BLAS, which ran VGG16's fc1 at 1.2 GFLOP/s (docs/exec.md).
  # The serial build, so that ATen's --threads alone sets the parallelism.
  libopenblas0-serial
  python3-venv python3-dev
)

source "$(dirname "$0")/apt_packages.sh"
install_missing_packages install-deps "${packages[@]}"
