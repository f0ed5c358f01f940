#!/usr/bin/env bash
# Configures and builds attnbench into build/ (Release, Ninja, ccache when present).
# Uses the LibTorch of the setup script's virtual environment unless CMAKE_PREFIX_PATH is set,
# so `CMAKE_PREFIX_PATH=/path/to/libtorch scripts/build.sh` builds against your own LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${ATTNBENCH_VENV:-/opt/attnbench/venv}
BUILD_DIR=${ATTNBENCH_BUILD_DIR:-build}
if [ -z "${CMAKE_PREFIX_PATH:-}" ]; then
  CMAKE_PREFIX_PATH=$("$VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
fi
# Two cores and heavy LibTorch headers: more parallel jobs only add memory pressure.
JOBS=${ATTNBENCH_JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH" ${ATTNBENCH_CMAKE_ARGS:-} >&2
cmake --build "$BUILD_DIR" -j "$JOBS" >&2
