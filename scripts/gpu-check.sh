#!/usr/bin/env bash
# The GPU check (issues 16 and 30): everything attnbench does on a GPU, in one call, within a
# budget of device time. Steps, in order of value (each capped; README "GPU check" has the time
# plan with each cap's estimate):
#   libraries    --bundle: unpack the bundle, find the device's torch, check with ldd that every
#                library resolves (naming what is missing)
#   build        without --bundle: scripts/build.sh into ATTNBENCH_BUILD_DIR (default build/)
#                (--skip-build: use it as it is)
#   gpu-tests    every [gpu] test of the suite; on a GPU machine a [gpu] test that skips fails
#                the check (no GPU seen is a failure there, not a pass)
#   seed-table   attnbench run configs/seed-table.json (bert-base, the article's rows)
#   attention    attnbench attention: the grid of issue 16 (fp16/bf16, seq 512-4096, causal and
#                not) and a second with head dim 128, key padding and batch 4 (issue 30)
#   offload-gpu  attnbench run configs/offload-gpu.json: under its device_memory_limit the
#                resident variant must be SKIPPED as OOM and every offload variant PASS with
#                its measured device weights under the limit
#   nccl-world   attnbench launch --nproc 1 configs/nccl-one-rank.json: a one-rank world, its
#                process group NCCL on a GPU (Gloo on the CPU)
# Everything goes under one folder (--out, default results/gpu-check-<UTC time>): each step's log
# and outputs, device.txt (the GPU, driver, toolkit, commit) and SUMMARY.md (each step's status
# and seconds, and the steps not run). With --pack DIR, after every step that folder is packed
# into DIR/gpu-check.tar.gz with SUMMARY.md beside it, so a run cut short still returns what it
# finished (the device tool brings back at most 8 files from $OUT, two folders down).
# Exit status: 0 when every step passed, 1 when one failed or ran out of budget, 2 for a bad
# command line.
#
#   scripts/gpu-check.sh [--out DIR] [--budget-s 330] [--pack DIR] [--skip-build] [--cpu-dry-run]
#   scripts/gpu-check.sh --bundle DIR [--pack DIR] [--budget-s 330] [--cpu-dry-run]
#   scripts/gpu-check.sh --rehearse [--bundle DIR]
#
# --bundle DIR: the binaries and libraries of scripts/gpu-bundle.sh (DIR/bundle.tar.xz), built
# elsewhere; nothing is built. The device's torch is python3's (`import torch`); the library path
# is the bundle's lib/, that torch's lib/ and its nvidia/*/lib, then what was set before.
#
# --cpu-dry-run runs the same steps on the CPU (caps and default budget 10 times the H200's), so
# that only the device itself is untested when a GPU comes: the [gpu] tests skip (as they must without a GPU), the configs are copied into
# OUT/configs/ cut to smoke size (fewer samples, shorter sequences, smaller models, device cpu,
# offload target "cpu") and the attention grids run at CPU sizes. Its figures mean nothing;
# its folder says "CPU dry run" in SUMMARY.md and device.txt.
#
# --rehearse runs the bundle here as the device would (CI does, .ci/run): from a copy of the
# working tree in a temporary folder without a build directory, the bundle carried in, PATH's
# python3 a stand-in whose torch is this machine's presented under a neutral path, no library
# path but the bundle's and that torch's, and an ldd check that nothing resolves to
# /opt/attnbench, to a build directory, or to a library outside the bundle, that torch and
# scripts/gpu-device-libs.txt (one the device would lack); every step cut to smoke size on the
# CPU (--cpu-dry-run), packed as on the device, the archive then read back.
set -uo pipefail
cd "$(dirname "$0")/.."

RUN_DIR=""
BUDGET_S=330
BUDGET_GIVEN=0
BUILD=1
DRY=0
BUNDLE=""
PACK=""
REHEARSE=0
STRICT=${ATTNBENCH_GPU_CHECK_STRICT:-0}  # set by --rehearse: libraries outside bundle/torch/device list fail
while [ $# -gt 0 ]; do
  case "$1" in
    --out) RUN_DIR=${2:?--out needs a directory}; shift 2 ;;
    --budget-s) BUDGET_S=${2:?--budget-s needs seconds}; BUDGET_GIVEN=1; shift 2 ;;
    --skip-build) BUILD=0; shift ;;
    --cpu-dry-run) DRY=1; shift ;;
    --bundle) BUNDLE=${2:?--bundle needs the bundle directory}; shift 2 ;;
    --pack) PACK=${2:?--pack needs a directory}; shift 2 ;;
    --rehearse) REHEARSE=1; shift ;;
    -h|--help) sed -n '2,48p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$BUDGET_S" in ''|*[!0-9]*) echo "gpu-check: --budget-s must be a whole number of seconds" >&2; exit 2 ;; esac

# --- --rehearse: the device's conditions, here -------------------------------------------------
if [ "$REHEARSE" = 1 ]; then
  BUNDLE=${BUNDLE:-.gpu-bundle}
  [ -f "$BUNDLE/bundle.tar.xz" ] || { echo "gpu-check: no bundle in $BUNDLE: run scripts/gpu-bundle.sh first" >&2; exit 2; }
  SRC=$(pwd)
  VENV=${ATTNBENCH_VENV:-/opt/attnbench/venv}
  REAL_TORCH=$("$VENV/bin/python" -c 'import torch, os; print(os.path.dirname(torch.__file__))') || exit 1
  T=$(mktemp -d)
  trap 'rm -rf "$T"' EXIT
  # The working tree as a device call sends it (tracked files, untracked ones git does not
  # ignore), without build/, and the bundle as carried.
  mkdir -p "$T/tree"
  git ls-files -co --exclude-standard -z | (cd "$SRC" && xargs -0 cp --parents -t "$T/tree") || exit 1
  mkdir -p "$T/tree/.gpu-bundle"
  cp "$BUNDLE/bundle.tar.xz" "$BUNDLE/MANIFEST.txt" "$T/tree/.gpu-bundle/"
  # The device's torch is /opt/torch/.venv's: present this machine's under a neutral path, with
  # a python3 that finds it there first, so nothing the binaries load names /opt/attnbench.
  mkdir -p "$T/site" "$T/bin" "$T/pack"
  ln -s "$REAL_TORCH" "$T/site/torch"
  ln -s "$(dirname "$REAL_TORCH")/nvidia" "$T/site/nvidia"
  printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$T/site" "$VENV/bin/python" >"$T/bin/python3"
  chmod +x "$T/bin/python3"
  echo "gpu-check: rehearsing the device call in $T/tree (bundle $BUNDLE, torch presented as $T/site/torch)" >&2
  start=$SECONDS
  rc=0
  (cd "$T/tree" && env -u LD_LIBRARY_PATH -u ATTNBENCH_BUILD_DIR -u ATTNBENCH_PYTHON PATH="$T/bin:/usr/bin:/bin" \
     ATTNBENCH_GPU_CHECK_STRICT=1 ATTNBENCH_GPU_CHECK_FORBID="/opt/attnbench:$SRC/build:/build/" \
     bash scripts/gpu-check.sh --bundle .gpu-bundle --cpu-dry-run --pack "$T/pack" --budget-s 1800) || rc=$?
  # What comes back from the device: at most 8 files, two folders down; here one archive and
  # SUMMARY.md, and the archive must hold the run's folder with its summary.
  back=$(cd "$T/pack" && find . -type f | sort)
  echo "gpu-check: the device would return: $(echo $back)" >&2
  [ "$(echo "$back" | grep -c .)" -le 8 ] || { echo "gpu-check: more than 8 files under the pack folder" >&2; rc=1; }
  [ "$back" = "$(printf './SUMMARY.md\n./gpu-check.tar.gz')" ] || { echo "gpu-check: the pack folder should hold gpu-check.tar.gz and SUMMARY.md" >&2; rc=1; }
  # The listing first: under pipefail, grep -q closing the pipe early would fail tar (SIGPIPE).
  listing=$(tar -tzf "$T/pack/gpu-check.tar.gz" 2>&1)
  if ! grep -q '/SUMMARY.md$' <<<"$listing"; then
    echo "gpu-check: the archive holds no SUMMARY.md" >&2
    rc=1
  fi
  echo "gpu-check: rehearsal $([ "$rc" = 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s" >&2
  exit "$rc"
fi

[ -n "$RUN_DIR" ] || RUN_DIR="results/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)"
BUILD_DIR=${ATTNBENCH_BUILD_DIR:-build}
PY=${ATTNBENCH_PYTHON:-python3}
mkdir -p "$RUN_DIR" || exit 2
RUN_DIR=$(cd "$RUN_DIR" && pwd)
if [ -n "$PACK" ]; then
  mkdir -p "$PACK" || exit 2
  PACK=$(cd "$PACK" && pwd)
fi
BIN="$BUILD_DIR/attnbench"
TESTS="$BUILD_DIR/tests/attnbench_tests"
MODE=$([ "$DRY" = 1 ] && echo "CPU dry run (no GPU used: figures mean nothing)" || echo "GPU")
[ -n "$BUNDLE" ] && MODE="$MODE, from the bundle"

# Each step's cap, in seconds; the budget left caps it further. The estimates beside them (for
# one H200 of the lent machine, from FLOPs and bytes; README "GPU check" shows the arithmetic)
# have not been measured: no GPU has run this script yet. With the machine's start (~90 s) the
# bundle's caps sum to 420 s, 7 minutes.
CAP_LIBRARIES=20  # est.  8 s: unpack the xz, import torch once (its path), ldd
CAP_BUILD=240     # est. 2-4 min on 16 cores (without --bundle only)
CAP_TESTS=60      # est. 25 s: CUDA start, 96 kernel cases (float64 references on the CPU), small models
CAP_SEED=100      # est. 45 s: fp32 row 12 passes x 99 TFLOP at ~50 TFLOP/s = 24 s, four fp16 rows ~15 s
CAP_ATTENTION=60  # est. 20 s: 24 points, their float64 references on the CPU ~8 s, 2 ms samples
CAP_OFFLOAD=60    # est. 25 s: a 3.6 GB host model built and pinned, 15 passes streaming 7-14 GB at ~50 GB/s
CAP_NCCL=30       # est. 10 s: a rank process, NCCL's communicator, bert-mini passes
# The caps are the H200 plan's. A CPU dry run (a rehearsal on a shared 2-core CI machine) has
# none of that machine's speed (under a parallel build here, importing torch alone took over a
# minute): its caps and default budget are 10 times as long, there only to bound a hang.
if [ "$DRY" = 1 ]; then
  for c in CAP_LIBRARIES CAP_BUILD CAP_TESTS CAP_SEED CAP_ATTENTION CAP_OFFLOAD CAP_NCCL; do
    eval "$c=\$((10 * $c))"
  done
  [ "$BUDGET_GIVEN" = 1 ] || BUDGET_S=$((10 * BUDGET_S))
fi
PLAN=(libraries gpu-tests seed-table attention offload-gpu nccl-world)
[ -z "$BUNDLE" ] && PLAN=(build gpu-tests seed-table attention offload-gpu nccl-world)
[ -z "$BUNDLE" ] && [ "$BUILD" = 0 ] && PLAN=(gpu-tests seed-table attention offload-gpu nccl-world)

SECONDS=0
failed=0
summary=()
done_steps=()

write_summary() {
  {
    echo "# GPU check: $MODE"
    echo
    echo "\`scripts/gpu-check.sh$([ -n "$BUNDLE" ] && echo " --bundle $BUNDLE")$([ "$DRY" = 1 ] && echo ' --cpu-dry-run') --budget-s $BUDGET_S\`, $(date -u +%Y-%m-%dT%H:%M:%SZ), ${SECONDS}s of ${BUDGET_S}s."
    echo
    echo "| step | status | seconds |"
    echo "|---|---|---:|"
    printf '%s\n' "${summary[@]}"
    local s d left=()
    for s in "${PLAN[@]}"; do
      for d in "${done_steps[@]}"; do [ "$d" = "$s" ] && continue 2; done
      left+=("$s")
    done
    if [ ${#left[@]} -gt 0 ]; then
      echo
      echo "Not run (yet): ${left[*]}."
    fi
    echo
    echo "The device, driver, toolkit and commit: device.txt. Each step's output: <step>.log and its folder."
  } >"$RUN_DIR/SUMMARY.md"
}

# After every step: the whole folder into one archive under --pack, SUMMARY.md beside it. Written
# to a temporary name and moved, so a run killed mid-pack leaves the previous archive whole.
pack() {
  [ -n "$PACK" ] || return 0
  tar -czf "$PACK/.gpu-check.tar.gz.tmp" -C "$(dirname "$RUN_DIR")" "$(basename "$RUN_DIR")" &&
    mv -f "$PACK/.gpu-check.tar.gz.tmp" "$PACK/gpu-check.tar.gz"
  cp "$RUN_DIR/SUMMARY.md" "$PACK/SUMMARY.md"
}

# step NAME CAP COMMAND…: runs COMMAND with its output in RUN_DIR/NAME.log, under the smaller of
# CAP and the budget left; records PASS / FAIL / TIMEOUT / NO BUDGET and the seconds it took, then
# rewrites SUMMARY.md and packs.
step() {
  local name=$1 cap=$2
  shift 2
  local left=$((BUDGET_S - SECONDS))
  local limit=$((cap < left ? cap : left))
  done_steps+=("$name")
  if [ "$limit" -le 0 ]; then
    summary+=("| $name | NO BUDGET | 0 |")
    failed=1
    echo "gpu-check: $name: no budget left" >&2
    write_summary
    pack
    return 1
  fi
  local start=$SECONDS rc=0
  echo "gpu-check: $name (at most ${limit}s)" >&2
  if declare -F "$1" >/dev/null; then  # a function of this script: run in a child bash to time it out
    timeout --kill-after=10 "$limit" bash -c "$*" >"$RUN_DIR/$name.log" 2>&1 || rc=$?
  else
    timeout --kill-after=10 "$limit" "$@" >"$RUN_DIR/$name.log" 2>&1 || rc=$?
  fi
  local took=$((SECONDS - start)) status=PASS
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    status="TIMEOUT after ${limit}s"
  elif [ "$rc" != 0 ]; then
    status="FAIL (exit $rc)"
  fi
  [ "$status" = PASS ] || failed=1
  summary+=("| $name | $status | $took |")
  echo "gpu-check: $name: $status in ${took}s" >&2
  write_summary
  pack
  [ "$status" = PASS ]
}

describe_device() {
  echo "mode: $MODE"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  if git rev-parse HEAD >/dev/null 2>&1; then
    echo "commit: $(git rev-parse HEAD)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  else
    echo "commit: unknown (the working tree has no .git)"
  fi
  [ -n "$BUNDLE" ] && grep -E '^(commit|built|against|cuda kernels):' "$BUNDLE/MANIFEST.txt" 2>/dev/null | sed 's/^/bundle /'
  echo "host: $(hostname)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
  if [ "$DRY" = 0 ]; then
    nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap --format=csv 2>&1 || echo "nvidia-smi failed"
    command -v nvcc >/dev/null && nvcc --version | tail -1
    [ -x /usr/local/cuda/bin/nvcc ] && /usr/local/cuda/bin/nvcc --version | tail -1
  fi
}
describe_device >"$RUN_DIR/device.txt"
write_summary
pack
if [ "$DRY" = 0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no GPU visible (nvidia-smi -L failed); on a machine without one use --cpu-dry-run" >&2
  exit 1
fi

# 1. the binaries: built here, or the bundle's with the device's torch
if [ -n "$BUNDLE" ]; then
  [ -f "$BUNDLE/bundle.tar.xz" ] || { echo "gpu-check: no $BUNDLE/bundle.tar.xz (scripts/gpu-bundle.sh makes it)" >&2; exit 2; }
  UNPACKED=$(mktemp -d)
  trap 'rm -rf "$UNPACKED"' EXIT
  BIN="$UNPACKED/bin/attnbench"
  TESTS="$UNPACKED/bin/attnbench_tests"
  # ldd over both binaries: every library found, and under STRICT (the rehearsal) none outside
  # the bundle, the torch found and scripts/gpu-device-libs.txt, none under a forbidden path.
  check_libraries() {
    set -u
    local torch_dir site problems=0 f line name path bad
    echo "bundle: $BUNDLE"; sed -n '1,6p' "$BUNDLE/MANIFEST.txt"
    if command -v xz >/dev/null; then
      tar -xJf "$BUNDLE/bundle.tar.xz" -C "$UNPACKED" || return 1
    else  # no xz on the device: Python's lzma reads it
      "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$BUNDLE/bundle.tar.xz" "$UNPACKED" || return 1
    fi
    local found
    found=$("$PY" -c 'import torch, os; print(os.path.dirname(torch.__file__)); print(torch.__version__)') || {
      echo "MISSING: python3 ($PY) cannot import torch: the device's torch is python3's"; return 1; }
    torch_dir=$(echo "$found" | sed -n 1p)
    site=$(dirname "$torch_dir")
    echo "torch: $torch_dir ($(echo "$found" | sed -n 2p))"
    local path_list="$UNPACKED/lib:$torch_dir/lib" d
    for d in "$site"/nvidia/*/lib; do [ -d "$d" ] && path_list="$path_list:$d"; done
    echo "$path_list" >"$UNPACKED/library-path"
    ldd_problems() {  # prints one line per library that does not resolve (or resolves badly)
      LD_LIBRARY_PATH="$(cat "$UNPACKED/library-path")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$BIN" "$TESTS" 2>&1 |
        grep -E 'not found' || true
    }
    if ldd_problems | grep -qE 'libstdc\+\+|libgcc_s' && [ -d "$UNPACKED/fallback" ]; then
      echo "the device's libstdc++/libgcc_s are older than the binaries need: using the bundle's fallback/"
      echo "$UNPACKED/fallback:$(cat "$UNPACKED/library-path")" >"$UNPACKED/library-path"
    fi
    export LD_LIBRARY_PATH="$(cat "$UNPACKED/library-path")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for f in "$BIN" "$TESTS"; do echo "== ldd $(basename "$f")"; ldd "$f" 2>&1; done
    while read -r line; do
      echo "MISSING: $line"; problems=1
    done < <(ldd "$BIN" "$TESTS" 2>&1 | grep 'not found' | sort -u)
    if [ "$STRICT" = 1 ]; then
      local device_libs
      device_libs=$(grep -v '^#' scripts/gpu-device-libs.txt | sed '/^$/d')
      while read -r name _ path _; do
        [ -n "$path" ] && [ "$path" != "not" ] || continue
        IFS=: read -ra forbidden <<<"${ATTNBENCH_GPU_CHECK_FORBID:-}"
        for bad in "${forbidden[@]}"; do
          [ -n "$bad" ] && case "$path" in *"$bad"*) echo "FORBIDDEN: $name resolves to $path"; problems=1 ;; esac
        done
        case "$path" in "$UNPACKED"/*|"$torch_dir"/*|"$site"/nvidia/*) continue ;; esac
        if ! grep -qxF "$name" <<<"$device_libs"; then
          echo "NOT ON THE DEVICE: $name resolves to $path, outside the bundle, the torch and scripts/gpu-device-libs.txt"
          problems=1
        fi
      done < <(ldd "$BIN" "$TESTS" 2>&1 | grep '=>' | sort -u)
    fi
    [ "$problems" = 0 ] && echo "every library resolves"
    return "$problems"
  }
  export -f check_libraries
  export BUNDLE UNPACKED BIN TESTS PY STRICT
  if ! step libraries "$CAP_LIBRARIES" check_libraries; then
    grep -E '^(MISSING|FORBIDDEN|NOT ON THE DEVICE)' "$RUN_DIR/libraries.log" >&2
    echo "gpu-check: the bundle's libraries do not resolve here; no step can run" >&2
    exit 1
  fi
  export LD_LIBRARY_PATH="$(cat "$UNPACKED/library-path")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
elif [ "$BUILD" = 1 ]; then
  step build "$CAP_BUILD" env ATTNBENCH_BUILD_DIR="$BUILD_DIR" scripts/build.sh
fi

# 2. every [gpu] test. On a GPU machine a skip means the tests saw no GPU: that fails the check.
gpu_tests() {
  # Unset: with it a skipping test ends the whole binary (that is how CTest learns of a skip).
  env -u ATTNBENCH_SKIP_RETURN_CODE "$TESTS" "[gpu]" --durations yes || return 1
  if [ "$DRY" = 0 ] && grep -q "SKIPPED:\|no CUDA device" "$RUN_DIR/gpu-tests.log"; then
    echo "gpu-check: a [gpu] test skipped on the GPU machine" >&2
    return 1
  fi
}
export DRY RUN_DIR TESTS BIN PY CONFIGS
export -f gpu_tests
step gpu-tests "$CAP_TESTS" gpu_tests

# The configs as shipped on a GPU; on the CPU dry run, copies cut to smoke size.
CONFIGS="$RUN_DIR/configs"
mkdir -p "$CONFIGS"
"$PY" - "$DRY" "$CONFIGS" <<'PYEOF' || failed=1
import json, sys
dry, out = sys.argv[1] == "1", sys.argv[2]
for name in ("seed-table", "offload-gpu", "nccl-one-rank"):
    with open(f"configs/{name}.json") as f:
        cfg = json.load(f)
    if dry:
        cfg["name"] = name + "-cpu-dry-run"
        cfg["device"] = "cpu"
        cfg["workload"]["samples"] = 8
        cfg["workload"]["max_length"] = 64
        lengths = cfg["workload"]["lengths"]
        lengths["max"] = 64
        lengths["min"] = min(lengths.get("min", 8), 16)
        if "median" in lengths:
            lengths["median"] = 32
        cfg["measure"] = {"warmup": 0, "repetitions": 1}
        if name == "seed-table":
            # bert-base's fp16 rows take minutes on a CPU. Not bert-tiny: its features hardly change
            # with the input, and the decisive head magnifies fp16's rounding past its tolerance.
            cfg["model"]["preset"] = "minilm-l6"
        if name == "offload-gpu":
            # The same variants on a model a CPU runs in a second; the limit stays (not applied).
            cfg["model"].update({"layers": 4, "hidden": 256, "heads": 4, "ffn": 1024})
        if name == "nccl-one-rank":
            cfg["model"]["preset"] = "bert-tiny"
        for v in cfg["variants"]:
            if "offload" in v:
                v["offload"]["target"] = "cpu"
            if v.get("batching", {}).get("kind") == "dynamic":
                v["batching"]["max_tokens"] = 256
            if "parallel" in v and "devices" in v["parallel"]:
                v["parallel"]["devices"] = ["cpu", "cpu"]
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(cfg, f, indent=2)
PYEOF

# 3. the article's table on bert-base
step seed-table "$CAP_SEED" "$BIN" run "$CONFIGS/seed-table.json" --out "$RUN_DIR/seed-table" --force

# 4. attention alone: issue 16's grid (BERT-base's heads of 64, one sequence, no padding), then
# head dim 128 with key padding (half the keys real) and batch 4 (issue 30).
attention_grids() {
  if [ "$DRY" = 1 ]; then
    "$BIN" attention --device cpu --seq 64,128 --dtype fp32 --causal false --warmup 0 --repetitions 1 \
      --out "$RUN_DIR/attention" --force || return 1
    "$BIN" attention --device cpu --batch 2 --heads 2 --head-dim 128 --valid 1,0.5 --seq 64 --dtype fp32 \
      --causal false,true --warmup 0 --repetitions 1 --out "$RUN_DIR/attention-d128" --force
  else
    "$BIN" attention --device cuda --seq 512,1024,2048,4096 --dtype fp16,bf16 --causal false,true \
      --warmup 1 --repetitions 5 --out "$RUN_DIR/attention" --force || return 1
    "$BIN" attention --device cuda --batch 4 --heads 12 --head-dim 128 --valid 1,0.5 --seq 1024,2048 --dtype bf16 \
      --causal false,true --warmup 1 --repetitions 5 --out "$RUN_DIR/attention-d128" --force
  fi
}
export -f attention_grids
step attention "$CAP_ATTENTION" attention_grids

# 5. offload under a memory limit, then what its results must say
offload_check() {
  "$BIN" run "$CONFIGS/offload-gpu.json" --out "$RUN_DIR/offload-gpu" --force || return 1
  "$PY" - "$DRY" "$RUN_DIR/offload-gpu/results.json" <<'PYEOF'
import json, sys
dry, path = sys.argv[1] == "1", sys.argv[2]
res = json.load(open(path))
limit = res["environment"]["config"]["device_memory_limit"]
units = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10}
limit_bytes = next((float(limit[:-3]) * f for u, f in units.items() if str(limit).endswith(u)), None) or float(limit)
problems = []
def metric(v, name):
    for m in v.get("metrics", []):
        if m["name"] == name:
            return m["value"]
    return None
for v in res["variants"]:
    name, status, reason = v["name"], v["status"], v.get("reason", "")
    offloaded = v.get("offload", {}).get("used", False)
    if name == "resident" and not dry:
        if status != "SKIPPED" or "OOM" not in reason:
            problems.append(f"{name}: expected SKIPPED with OOM under the limit, got {status}: {reason}")
        continue
    if status != "PASS":
        problems.append(f"{name}: expected PASS, got {status}: {reason}")
        continue
    weights, peak = metric(v, "device_weight_bytes"), metric(v, "device_peak_bytes")
    if weights is None or peak is None:
        problems.append(f"{name}: no measured device_weight_bytes / device_peak_bytes")
        continue
    if offloaded:
        bound = v["offload"]["resident_weight_bytes"]
        if not (bound <= weights <= bound * 1.05 + (8 << 20)):
            problems.append(f"{name}: measured device weights {weights} bytes, computed bound {bound}")
        if not dry and peak >= limit_bytes:
            problems.append(f"{name}: measured device peak {peak} bytes, not under the limit {limit_bytes}")
        if v["offload"]["max_resident_layers"] > v["offload"]["resident_bound"]:
            problems.append(f"{name}: more layers resident than the bound")
    print(f"{name}: {status}, device weights {weights / 2**20:.1f} MiB measured, peak {peak / 2**20:.1f} MiB")
for p in problems:
    print("problem:", p)
sys.exit(1 if problems else 0)
PYEOF
}
export -f offload_check
step offload-gpu "$CAP_OFFLOAD" offload_check

# 6. a one-rank world through `attnbench launch`: the rank on cuda:LOCAL_RANK, its NCCL group bound
# to it (Gloo on the dry run), every variant PASS.
step nccl-world "$CAP_NCCL" "$BIN" launch --nproc 1 "$CONFIGS/nccl-one-rank.json" --out "$RUN_DIR/nccl-world" --force

write_summary
pack
cat "$RUN_DIR/SUMMARY.md"
exit "$failed"
