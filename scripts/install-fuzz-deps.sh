#!/usr/bin/env bash
# Installs what the libFuzzer targets in fuzz/ need on Debian 12 beyond install-deps.sh: clang 14
# and its compiler-rt (libclang_rt.fuzzer, asan and ubsan, which Debian ships in
# libclang-rt-14-dev, only recommended by clang). Idempotent; runs apt-get as root or with sudo.
set -euo pipefail

packages=(clang libclang-rt-14-dev)

source "$(dirname "$0")/apt_packages.sh"
install_missing_packages install-fuzz-deps "${packages[@]}"
