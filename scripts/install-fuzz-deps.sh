#!/usr/bin/env bash
# Installs what the libFuzzer targets in fuzz/ need on Debian 12 beyond install-deps.sh: clang 14
# and its compiler-rt (libclang_rt.fuzzer, asan and ubsan, which Debian ships in
# libclang-rt-14-dev, only recommended by clang). Idempotent; runs apt-get as root or with sudo.
set -euo pipefail

packages=(clang libclang-rt-14-dev)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-fuzz-deps: all ${#packages[@]} Debian packages present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
echo "install-fuzz-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  # A fresh machine may have no package lists yet.
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
