#!/usr/bin/env bash
# Installs the Debian packages ember's tests need: NVIDIA user-space libraries
# from non-free (they load without a GPU), PyTorch and torchvision (fixtures and parity tests)
# and Fashion-MNIST. Idempotent; safe to run on a developer machine.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && ! grep -q 'non-free' "$src"; then
  sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$src"
fi
if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list && ! grep -q 'non-free' /etc/apt/sources.list; then
  sed -i 's/ main$/ main contrib non-free/' /etc/apt/sources.list
fi
pkgs=(libcuda1 libnvidia-ml1 libnvrtc11.2 libnvrtc-builtins11.8 libcublas11 python3-torch python3-torchvision python3-pil dataset-fashion-mnist g++ gcc libonnx-testdata)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
