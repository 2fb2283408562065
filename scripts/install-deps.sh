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
  python3-venv python3-dev
)

source "$(dirname "$0")/apt_packages.sh"
install_missing_packages install-deps "${packages[@]}"
