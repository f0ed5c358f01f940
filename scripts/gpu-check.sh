#!/usr/bin/env bash
# The GPU check (issues 16, 30 and 39): everything attnbench does on a GPU, in one call, within a
# budget of device time. Steps, in order of value (each capped; README "GPU check" has the time
# plan with each cap's estimate):
#   libraries    --bundle: unpack the bundle, find the device's torch, compare its version with the
#                one the bundle was built against (MANIFEST.txt), check with ldd that every library
#                resolves (naming what is missing), then load both binaries with LD_BIND_NOW=1 so
#                that every symbol must resolve too (LibTorch's sonames carry no version: ldd finds
#                a libtorch_cpu.so of another release as readily as the right one)
#   build        without --bundle: scripts/build.sh into ATTNBENCH_BUILD_DIR (default build/)
#                (--skip-build: use it as it is)
#   gpu-tests    every [gpu] test of the suite; on a GPU machine a [gpu] test that skips fails
#                the check (no GPU seen is a failure there, not a pass)
#   seed-table   attnbench run configs/seed-table-bert-base.json (bert-base random weights, the
#                article's rows, for speed: the real model does not fit the carry)
#   attention    attnbench attention: the grid of issue 16 (fp16/bf16, seq 512-4096, causal and
#                not) and a second with head dim 128, key padding and batch 4 (issue 30)
#   offload-gpu  attnbench run configs/offload-gpu.json: under its device_memory_limit the
#                resident variant must be SKIPPED as OOM and every offload variant PASS with
#                its measured device weights under the limit
#   nccl-world   attnbench launch --nproc 1 configs/nccl-one-rank.json: a one-rank world, its
#                process group NCCL on a GPU (Gloo on the CPU)
# The `run` steps pass --no-cost-check: its memory estimate reads the memory the machine reports,
# which a freshly started VM may report far below what it has (device.txt records MemTotal,
# MemAvailable and the GPU's memory).
# Everything goes under one folder (--out, default results/gpu-check-<UTC time>): each step's log
# and outputs, device.txt (the GPU, driver, toolkit, host and GPU memory, commit) and SUMMARY.md
# (each step's status and seconds, the steps not run, and the libraries step's checks: torch
# versions, LD_BIND_NOW). A step that does not PASS also prints the last 20 lines of its log on
# stderr, so that why it failed comes back in the call's output even when no file does. With
# --pack DIR, after every step that folder is packed into DIR/gpu-check.tar.gz with SUMMARY.md
# beside it, so a run cut short still returns what it finished (the device tool brings back at
# most 8 files from $OUT, two folders down).
# Exit status: 0 when every step passed, 1 when one failed or ran out of budget, 2 for a bad
# command line.
#
#   scripts/gpu-check.sh [--out DIR] [--budget-s 330] [--pack DIR] [--skip-build] [--cpu-dry-run]
#   scripts/gpu-check.sh --bundle DIR [--pack DIR] [--budget-s 330] [--skip STEP,...] [--cpu-dry-run]
#   scripts/gpu-check.sh --rehearse [--bundle DIR] [--inject MODE]
#
# --bundle DIR: the binaries and libraries of scripts/gpu-bundle.sh (DIR/bundle.tar.xz), built
# elsewhere; nothing is built. The device's torch is python3's (`import torch`); the library path
# is the bundle's lib/, that torch's lib/ and its nvidia/*/lib, then what was set before.
#
# --skip STEP,...: leave those steps out (SKIPPED in SUMMARY.md; they fail nothing): the retry of
# README "GPU check" skips the steps that passed in the first call. libraries cannot be skipped.
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
# --inject MODE plants one failure the device could meet into that rehearsal and checks that the
# call reports it as designed (each mode takes seconds, running only the steps it needs; CI runs
# --inject all):
#   missing-symbol  the bundle's copy of a library attnbench links is replaced by one that
#                   exports nothing: ldd still resolves it, LD_BIND_NOW=1 attnbench --version
#                   does not; libraries must FAIL naming the symbol, and no other step run
#   torch-version   the presented torch says another version than MANIFEST.txt: libraries must
#                   FAIL naming both versions, the later steps still run (the symbols resolve)
#   hang            gpu-tests sleeps past its cap (cut to 5 s): TIMEOUT, its log's tail on
#                   stderr, and the next step still runs
#   exit-3          the attention step exits 3: FAIL (exit 3), its log's tail on stderr
#   all             each of the four in turn
# (The hang and exit-3 modes use the test hook ATTNBENCH_GPU_CHECK_INJECT=hang:STEP,exit3:STEP,
# which replaces those steps' commands; ATTNBENCH_GPU_CHECK_INJECT_CAP caps a hanging one.)
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
INJECT=""
SKIP=""
STRICT=${ATTNBENCH_GPU_CHECK_STRICT:-0}  # set by --rehearse: libraries outside bundle/torch/device list fail
while [ $# -gt 0 ]; do
  case "$1" in
    --out) RUN_DIR=${2:?--out needs a directory}; shift 2 ;;
    --budget-s) BUDGET_S=${2:?--budget-s needs seconds}; BUDGET_GIVEN=1; shift 2 ;;
    --skip-build) BUILD=0; shift ;;
    --skip) SKIP=${2:?--skip needs a comma-separated list of steps}; shift 2 ;;
    --cpu-dry-run) DRY=1; shift ;;
    --bundle) BUNDLE=${2:?--bundle needs the bundle directory}; shift 2 ;;
    --pack) PACK=${2:?--pack needs a directory}; shift 2 ;;
    --rehearse) REHEARSE=1; shift ;;
    --inject) INJECT=${2:?--inject needs a mode (see --help)}; shift 2 ;;
    -h|--help) sed -n '2,73p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$BUDGET_S" in ''|*[!0-9]*) echo "gpu-check: --budget-s must be a whole number of seconds" >&2; exit 2 ;; esac
ALL_STEPS="libraries build gpu-tests seed-table attention offload-gpu nccl-world"
for s_ in ${SKIP//,/ }; do
  case " $ALL_STEPS " in *" $s_ "*) ;; *) echo "gpu-check: --skip: no step named $s_ (steps: $ALL_STEPS)" >&2; exit 2 ;; esac
  [ "$s_" = libraries ] && { echo "gpu-check: --skip: libraries cannot be skipped (every other step needs it)" >&2; exit 2; }
done
case "$INJECT" in
  ''|missing-symbol|torch-version|hang|exit-3|all) ;;
  *) echo "gpu-check: --inject: unknown mode $INJECT (missing-symbol, torch-version, hang, exit-3, all)" >&2; exit 2 ;;
esac
[ -z "$INJECT" ] || [ "$REHEARSE" = 1 ] || { echo "gpu-check: --inject belongs to --rehearse" >&2; exit 2; }

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
  # a python3 that finds it there first, so nothing the binaries load names /opt/attnbench. No
  # bytecode is written: a presented module must never overwrite the real torch's cache.
  present_torch() {  # DIR [VERSION]: DIR/site/torch (VERSION: a copy whose version.py says so), DIR/bin/python3
    local d=$1 version=${2:-} e
    mkdir -p "$d/site" "$d/bin"
    if [ -z "$version" ]; then
      ln -s "$REAL_TORCH" "$d/site/torch"
    else  # every entry a link to the real one but version.py (and no shared __pycache__)
      mkdir -p "$d/site/torch"
      for e in "$REAL_TORCH"/*; do
        case "$(basename "$e")" in version.py|__pycache__) continue ;; esac
        ln -s "$e" "$d/site/torch/"
      done
      sed "s/^__version__ = .*/__version__ = '$version'/" "$REAL_TORCH/version.py" >"$d/site/torch/version.py"
    fi
    ln -s "$(dirname "$REAL_TORCH")/nvidia" "$d/site/nvidia"
    printf '#!/bin/sh\nPYTHONDONTWRITEBYTECODE=1 PYTHONPATH=%s exec %s "$@"\n' "$d/site" "$VENV/bin/python" >"$d/bin/python3"
    chmod +x "$d/bin/python3"
  }
  # rehearse_call NAME BUNDLE_DIR PRESENTED [ENV=VALUE...] -- [gpu-check arguments...]: one device
  # call from $T/tree; its pack folder is $T/NAME/pack, its stderr $T/NAME/stderr; sets CALL_RC.
  rehearse_call() {
    local name=$1 bundle=$2 presented=$3 envs=()
    shift 3
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    mkdir -p "$T/$name/pack"
    CALL_RC=0
    (cd "$T/tree" && env -u LD_LIBRARY_PATH -u ATTNBENCH_BUILD_DIR -u ATTNBENCH_PYTHON -u ATTNBENCH_GPU_CHECK_INJECT \
       PATH="$presented/bin:/usr/bin:/bin" \
       ATTNBENCH_GPU_CHECK_STRICT=1 ATTNBENCH_GPU_CHECK_FORBID="/opt/attnbench:$SRC/build:/build/" "${envs[@]}" \
       bash scripts/gpu-check.sh --bundle "$bundle" --cpu-dry-run --pack "$T/$name/pack" --out "$T/$name/run" "$@") \
       2>"$T/$name/stderr" || CALL_RC=$?
    cat "$T/$name/stderr" >&2
  }
  # What comes back from the device: at most 8 files, two folders down; here one archive and
  # SUMMARY.md, and the archive must hold the run's folder with its summary.
  check_returned() {  # NAME: prints the problems, returns 1 when there are any
    local pack="$T/$1/pack" back listing bad=0
    back=$(cd "$pack" && find . -type f | sort)
    echo "gpu-check: the device would return: $(echo $back)" >&2
    [ "$(echo "$back" | grep -c .)" -le 8 ] || { echo "gpu-check: more than 8 files under the pack folder" >&2; bad=1; }
    [ "$back" = "$(printf './SUMMARY.md\n./gpu-check.tar.gz')" ] || { echo "gpu-check: the pack folder should hold gpu-check.tar.gz and SUMMARY.md" >&2; bad=1; }
    # The listing first: under pipefail, grep -q closing the pipe early would fail tar (SIGPIPE).
    listing=$(tar -tzf "$pack/gpu-check.tar.gz" 2>&1)
    grep -q '/SUMMARY.md$' <<<"$listing" || { echo "gpu-check: the archive holds no SUMMARY.md" >&2; bad=1; }
    return "$bad"
  }
  # expect NAME WHAT PATTERN FILE: FILE (summary or stderr) must match the extended regex PATTERN.
  expect_failures=0
  expect() {
    if grep -qE -- "$3" "$4"; then
      echo "gpu-check: injected $1: reported as designed: $2" >&2
    else
      echo "gpu-check: injected $1: NOT REPORTED: $2 (no /$3/ in $(basename "$4"))" >&2
      expect_failures=1
    fi
  }
  start=$SECONDS
  rc=0
  if [ -z "$INJECT" ]; then
    present_torch "$T/plain"
    echo "gpu-check: rehearsing the device call in $T/tree (bundle $BUNDLE, torch presented as $T/plain/site/torch)" >&2
    rehearse_call plain .gpu-bundle "$T/plain" -- --budget-s 1800
    rc=$CALL_RC
    check_returned plain || rc=1
    echo "gpu-check: rehearsal $([ "$rc" = 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s" >&2
    exit "$rc"
  fi
  modes=$INJECT
  [ "$INJECT" = all ] && modes="missing-symbol torch-version hang exit-3"
  # Steps the injected modes leave out, to take seconds: each needs libraries and one or two more.
  LATER="seed-table,attention,offload-gpu,nccl-world"
  for mode in $modes; do
    m0=$SECONDS
    echo "gpu-check: rehearsing the device call with an injected failure: $mode" >&2
    case "$mode" in
      missing-symbol)
        # A library of the bundle's lib/ that attnbench itself links, replaced by one that exports
        # nothing under the same name: found by ldd, missing every symbol.
        cc=$(command -v cc || command -v gcc) || { echo "gpu-check: --inject missing-symbol needs a C compiler" >&2; rc=1; continue; }
        u="$T/$mode/unpacked"
        mkdir -p "$u" "$T/tree/.gpu-bundle-$mode"
        tar -xJf "$BUNDLE/bundle.tar.xz" -C "$u" || { rc=1; continue; }
        victim=""
        for lib in $(readelf -dW "$u/bin/attnbench" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
          [ -f "$u/lib/$lib" ] && { victim=$lib; break; }
        done
        [ -n "$victim" ] || { echo "gpu-check: --inject missing-symbol: attnbench links no library of the bundle's lib/" >&2; rc=1; continue; }
        echo 'int attnbench_rehearsal_stub(void) { return 0; }' >"$T/$mode/stub.c"
        "$cc" -shared -fPIC -Wl,-soname,"$victim" -o "$u/lib/$victim" "$T/$mode/stub.c" || { rc=1; continue; }
        tar -C "$u" -cf - bin lib fallback | xz -T2 -0 >"$T/tree/.gpu-bundle-$mode/bundle.tar.xz"
        cp "$BUNDLE/MANIFEST.txt" "$T/tree/.gpu-bundle-$mode/"
        rm -rf "$u"
        present_torch "$T/$mode"
        rehearse_call "$mode" ".gpu-bundle-$mode" "$T/$mode" -- --budget-s 600
        sum="$T/$mode/pack/SUMMARY.md"
        expect "$mode" "libraries FAIL" '^\| libraries \| FAIL' "$sum"
        expect "$mode" "LD_BIND_NOW=1 attnbench --version failed, naming the undefined symbol" \
          'LD_BIND_NOW=1 attnbench --version`: FAILED.*undefined symbol' "$sum"
        expect "$mode" "ldd alone had found every library ($victim stubbed)" '^- ldd: every library found' "$sum"
        expect "$mode" "no later step run" '^Not run \(yet\): gpu-tests seed-table attention offload-gpu nccl-world' "$sum"
        expect "$mode" "the log's tail on stderr" 'the last 20 lines of libraries.log' "$T/$mode/stderr"
        rm -rf "$T/tree/.gpu-bundle-$mode"
        ;;
      torch-version)
        fake="0.0.0+rehearsal"
        present_torch "$T/$mode" "$fake"
        rehearse_call "$mode" .gpu-bundle "$T/$mode" -- --budget-s 600 --skip "$LATER"
        sum="$T/$mode/pack/SUMMARY.md"
        built=$(sed -n 's/^against: torch \([^ ]*\).*/\1/p' "$BUNDLE/MANIFEST.txt")
        expect "$mode" "libraries FAIL naming the torch mismatch" '^\| libraries \| FAIL \(torch' "$sum"
        expect "$mode" "both versions in the summary" "torch: MISMATCH: the device's ${fake//+/\\+} .*built against ${built//+/\\+}" "$sum"
        expect "$mode" "the symbols still checked" 'LD_BIND_NOW=1 attnbench --version`: OK' "$sum"
        expect "$mode" "the next step still run" '^\| gpu-tests \| PASS' "$sum"
        ;;
      hang)
        present_torch "$T/$mode"
        rehearse_call "$mode" .gpu-bundle "$T/$mode" ATTNBENCH_GPU_CHECK_INJECT=hang:gpu-tests ATTNBENCH_GPU_CHECK_INJECT_CAP=5 \
          -- --budget-s 600 --skip seed-table,offload-gpu,nccl-world
        sum="$T/$mode/pack/SUMMARY.md"
        expect "$mode" "gpu-tests TIMEOUT at its cap" '^\| gpu-tests \| TIMEOUT after 5s \| ([5-9]|1[0-9]) \|' "$sum"
        expect "$mode" "the next step still run" '^\| attention \| PASS' "$sum"
        expect "$mode" "the log's tail on stderr" 'gpu-tests.log \| injected: hang' "$T/$mode/stderr"
        ;;
      exit-3)
        present_torch "$T/$mode"
        rehearse_call "$mode" .gpu-bundle "$T/$mode" ATTNBENCH_GPU_CHECK_INJECT=exit3:attention \
          -- --budget-s 600 --skip seed-table,offload-gpu,nccl-world
        sum="$T/$mode/pack/SUMMARY.md"
        expect "$mode" "attention FAIL (exit 3)" '^\| attention \| FAIL \(exit 3\)' "$sum"
        expect "$mode" "the steps before it PASS" '^\| gpu-tests \| PASS' "$sum"
        expect "$mode" "the log's tail on stderr" 'attention.log \| injected: exit 3' "$T/$mode/stderr"
        ;;
    esac
    [ "$CALL_RC" = 1 ] || { echo "gpu-check: injected $mode: the call exited $CALL_RC, not 1" >&2; expect_failures=1; }
    check_returned "$mode" || expect_failures=1
    echo "gpu-check: injected $mode: $((SECONDS - m0))s" >&2
  done
  [ "$expect_failures" = 0 ] || rc=1
  echo "gpu-check: rehearsal with injected failures ($modes) $([ "$rc" = 0 ] && echo passed: each reported as designed || echo FAILED) in $((SECONDS - start))s" >&2
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
# have not been measured: no GPU has run this script yet. The caps bound a step that goes wrong;
# the budget (330 s, the call's timeout_s of 360 less 30 s of margin) bounds the whole call: the
# estimates sum to 160 s, under half of it.
CAP_LIBRARIES=60  # est. 10 s: unpack the xz, import torch once (path, version), ldd, two LD_BIND_NOW loads
                  #   (a cold import of torch and the first load of ~2 GB of libraries on a fresh VM can
                  #   take several times that: it gates every other step, so it gets a minute)
CAP_BUILD=240     # est. 2-4 min on 16 cores (without --bundle only)
CAP_TESTS=60      # est. 25 s: CUDA start, 96 kernel cases (float64 references on the CPU), small models
CAP_SEED=150      # est. 70 s, from a count of passes (measure 2 warm-up + 10 rounds, plus the check
                  #   pass: 13 a variant) and FLOPs (bert-base: 189 MFLOP a token at length 512, ~175 at 128):
                  #   Baseline fp32: 1024 samples padded to 512, 99 TFLOP a pass at ~50 TFLOP/s = 2.0 s,
                  #     naive's scores 0.6 TB at ~4 TB/s +0.15 s: 13 x 2.15 = 28 s
                  #   AMP: 99 TFLOP at ~500 TFLOP/s + the scores = 0.4 s: 13 x 0.4 = 5 s
                  #   AMP + CPU Offloading: 11 GB of weights a pass at ~50 GB/s under it: 13 x 0.5 = 7 s
                  #   Dynamic Batching: ~157k real tokens, 27 TFLOP a pass, small batches: 13 x 0.2 = 3 s
                  #   Parallel Processing (one GPU, worker threads): 13 x 0.25 = 3 s
                  #   passes 46 s; then process start-up (loading ~2 GB of CUDA libraries, the CUDA
                  #   context, cuBLAS) ~10 s, bert-base's 110 M seeded weights and the decisive head's
                  #   fit (64 probes of <=128 tokens, ~1.4 TFLOP fp32 on the host CPU) ~6 s, matmul
                  #   ceilings ~3 s, five models to the device and the output checks ~5 s: ~70 s, x2
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
# What a step's command leaves for step() (NOTES/NAME.status: a status to record instead of
# "FAIL (exit N)"); removed on exit with the bundle's unpacked copy.
NOTES=$(mktemp -d)
UNPACKED=""
trap 'rm -rf "$NOTES" ${UNPACKED:+"$UNPACKED"}' EXIT

write_summary() {
  {
    echo "# GPU check: $MODE"
    echo
    echo "\`scripts/gpu-check.sh$([ -n "$BUNDLE" ] && echo " --bundle $BUNDLE")$([ "$DRY" = 1 ] && echo ' --cpu-dry-run') --budget-s $BUDGET_S$([ -n "$SKIP" ] && echo " --skip $SKIP")\`, $(date -u +%Y-%m-%dT%H:%M:%SZ), ${SECONDS}s of ${BUDGET_S}s."
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
    if [ -s "$RUN_DIR/libraries-checks.md" ]; then
      echo
      echo "The libraries step's checks:"
      echo
      cat "$RUN_DIR/libraries-checks.md"
    fi
    echo
    echo "The device, driver, toolkit, memory and commit: device.txt. Each step's output: <step>.log and its folder."
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

# The test hook of --rehearse --inject: ATTNBENCH_GPU_CHECK_INJECT=hang:STEP,exit3:STEP.
injected() {  # STEP: prints hang, exit3 or nothing
  local i all=${ATTNBENCH_GPU_CHECK_INJECT:-}
  for i in ${all//,/ }; do
    [ "${i#*:}" = "$1" ] && { echo "${i%%:*}"; return; }
  done
}

# step NAME CAP COMMAND…: runs COMMAND with its output in RUN_DIR/NAME.log, under the smaller of
# CAP and the budget left; records PASS / FAIL / TIMEOUT / NO BUDGET / SKIPPED and the seconds it
# took, prints the log's last 20 lines on stderr when it did not pass, then rewrites SUMMARY.md
# and packs.
step() {
  local name=$1 cap=$2
  shift 2
  done_steps+=("$name")
  case ",$SKIP," in
    *",$name,"*)
      summary+=("| $name | SKIPPED (--skip) | 0 |")
      echo "gpu-check: $name: skipped (--skip)" >&2
      write_summary
      pack
      return 0 ;;
  esac
  case "$(injected "$name")" in
    hang)
      cap=${ATTNBENCH_GPU_CHECK_INJECT_CAP:-5}
      set -- bash -c 'echo "injected: hang (gpu-check.sh --rehearse --inject hang)"; exec sleep 3600' ;;
    exit3)
      set -- bash -c 'echo "injected: exit 3 (gpu-check.sh --rehearse --inject exit-3)"; exit 3' ;;
  esac
  local left=$((BUDGET_S - SECONDS))
  local limit=$((cap < left ? cap : left))
  if [ "$limit" -le 0 ]; then
    summary+=("| $name | NO BUDGET | 0 |")
    failed=1
    echo "gpu-check: $name: no budget left" >&2
    write_summary
    pack
    return 1
  fi
  local start=$SECONDS rc=0
  rm -f "$NOTES/$name.status"
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
    [ -s "$NOTES/$name.status" ] && status=$(head -1 "$NOTES/$name.status")
  fi
  [ "$status" = PASS ] || failed=1
  summary+=("| $name | $status | $took |")
  echo "gpu-check: $name: $status in ${took}s" >&2
  if [ "$status" != PASS ]; then
    echo "gpu-check: the last 20 lines of $name.log:" >&2
    tail -n 20 "$RUN_DIR/$name.log" | sed "s/^/gpu-check: $name.log | /" >&2
  fi
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
  # The memory the machine reports now (a VM just started may report far less than it has; the
  # `run` steps pass --no-cost-check for that reason), and the GPU's.
  echo "memory: $(grep -E '^(MemTotal|MemAvailable):' /proc/meminfo | tr -s ' ' | paste -sd ',' | sed 's/,/, /')"
  if [ "$DRY" = 0 ]; then
    nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free,driver_version,compute_cap --format=csv 2>&1 ||
      echo "nvidia-smi failed"
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
  BIN="$UNPACKED/bin/attnbench"
  TESTS="$UNPACKED/bin/attnbench_tests"
  # ldd over both binaries: every library found, and under STRICT (the rehearsal) none outside
  # the bundle, the torch found and scripts/gpu-device-libs.txt, none under a forbidden path.
  # Then the torch's version against the manifest's, and both binaries loaded with every symbol
  # bound at once (LD_BIND_NOW=1): a library of the right name and another release is found by
  # ldd, and only binding its symbols shows what it lacks. The checks' results go into
  # RUN_DIR/libraries-checks.md, which SUMMARY.md quotes.
  check_libraries() {
    set -u
    local torch_dir site version built problems=0 missing=0 mismatch=0 f line name path bad
    local checks="$RUN_DIR/libraries-checks.md"
    : >"$checks"
    echo "bundle: $BUNDLE"; sed -n '1,6p' "$BUNDLE/MANIFEST.txt"
    if command -v xz >/dev/null; then
      tar -xJf "$BUNDLE/bundle.tar.xz" -C "$UNPACKED" || return 1
    else  # no xz on the device: Python's lzma reads it
      "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$BUNDLE/bundle.tar.xz" "$UNPACKED" || return 1
    fi
    local found
    found=$("$PY" -c 'import torch, os; print(os.path.dirname(torch.__file__)); print(torch.__version__)') || {
      echo "MISSING: python3 ($PY) cannot import torch: the device's torch is python3's"
      echo "- torch: python3 ($PY) cannot import torch" >>"$checks"
      return 1; }
    torch_dir=$(echo "$found" | sed -n 1p)
    version=$(echo "$found" | sed -n 2p)
    site=$(dirname "$torch_dir")
    echo "torch: $torch_dir ($version)"
    built=$(sed -n 's/^against: torch \([^ ]*\).*/\1/p' "$BUNDLE/MANIFEST.txt")
    if [ -z "$built" ]; then
      echo "- torch: the device's ${version:-(no version)} ($torch_dir); the bundle's MANIFEST.txt names none: not compared" >>"$checks"
    elif [ "$version" = "$built" ]; then
      echo "- torch: the device's $version ($torch_dir), the bundle built against $built: same" >>"$checks"
    else
      echo "MISMATCH: torch $version here, the bundle was built against $built"
      echo "- torch: MISMATCH: the device's ${version:-(no version)} ($torch_dir), the bundle built against $built (LibTorch's C++ ABI is not kept across releases, and its library names carry no version)" >>"$checks"
      mismatch=1
    fi
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
      echo "- libstdc++/libgcc_s: the device's are older than the binaries need: the bundle's fallback/ is used" >>"$checks"
    fi
    export LD_LIBRARY_PATH="$(cat "$UNPACKED/library-path")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for f in "$BIN" "$TESTS"; do echo "== ldd $(basename "$f")"; ldd "$f" 2>&1; done
    local not_found=()
    while read -r line; do
      echo "MISSING: $line"; not_found+=("${line%% *}"); missing=1
    done < <(ldd "$BIN" "$TESTS" 2>&1 | grep 'not found' | sed 's/^[[:space:]]*//' | sort -u)
    if [ "$missing" = 0 ]; then
      echo "- ldd: every library found" >>"$checks"
    else
      echo "- ldd: NOT FOUND: ${not_found[*]}" >>"$checks"
    fi
    if [ "$STRICT" = 1 ]; then
      local device_libs strict=0
      device_libs=$(grep -v '^#' scripts/gpu-device-libs.txt | sed '/^$/d')
      while read -r name _ path _; do
        [ -n "$path" ] && [ "$path" != "not" ] || continue
        IFS=: read -ra forbidden <<<"${ATTNBENCH_GPU_CHECK_FORBID:-}"
        for bad in "${forbidden[@]}"; do
          [ -n "$bad" ] && case "$path" in *"$bad"*) echo "FORBIDDEN: $name resolves to $path"; strict=1 ;; esac
        done
        case "$path" in "$UNPACKED"/*|"$torch_dir"/*|"$site"/nvidia/*) continue ;; esac
        if ! grep -qxF "$name" <<<"$device_libs"; then
          echo "NOT ON THE DEVICE: $name resolves to $path, outside the bundle, the torch and scripts/gpu-device-libs.txt"
          strict=1
        fi
      done < <(ldd "$BIN" "$TESTS" 2>&1 | grep '=>' | sort -u)
      [ "$strict" = 0 ] || { problems=1; echo "- ldd (the rehearsal's strict check): a library resolves where the device has none (FORBIDDEN / NOT ON THE DEVICE in libraries.log)" >>"$checks"; }
    fi
    # Every symbol bound at load, or the loader names the first one missing.
    local out rc args
    for f in "$BIN" "$TESTS"; do
      args="--version"
      [ "$f" = "$TESTS" ] && args="--help"
      if [ "$missing" = 1 ]; then
        echo "- \`LD_BIND_NOW=1 $(basename "$f") $args\`: not run (a library is missing)" >>"$checks"
        continue
      fi
      rc=0
      out=$(LD_BIND_NOW=1 "$f" $args 2>&1) || rc=$?
      if [ "$rc" = 0 ]; then
        echo "LD_BIND_NOW=1 $(basename "$f") $args: every symbol resolves"
        line=$(echo "$out" | head -1)
        echo "- \`LD_BIND_NOW=1 $(basename "$f") $args\`: OK$([ "$f" = "$BIN" ] && [ -n "$line" ] && echo " ($line)")" >>"$checks"
      else
        line=$(grep -m1 -iE 'undefined symbol|symbol lookup|error' <<<"$out" || echo "$out" | head -1)
        echo "UNRESOLVED: LD_BIND_NOW=1 $(basename "$f") $args exited $rc: $line"
        echo "- \`LD_BIND_NOW=1 $(basename "$f") $args\`: FAILED (exit $rc): $line" >>"$checks"
        problems=1
      fi
    done
    echo "- cuda kernels (MANIFEST.txt): $(sed -n 's/^cuda kernels: //p' "$BUNDLE/MANIFEST.txt" | grep . || echo 'not stated')" >>"$checks"
    [ "$missing" = 1 ] && problems=1
    if [ "$problems" = 0 ] && [ "$mismatch" = 1 ]; then
      # Every library and symbol resolves: the steps still run, their results marked by this row.
      echo "FAIL (torch $version, the bundle built against $built; every symbol resolves, so the steps run)" >"$NOTES/libraries.status"
      touch "$NOTES/libraries.usable"
      return 1
    fi
    [ "$problems" = 0 ] && echo "every library resolves"
    return "$problems"
  }
  export -f check_libraries
  export BUNDLE UNPACKED BIN TESTS PY STRICT RUN_DIR NOTES
  if ! step libraries "$CAP_LIBRARIES" check_libraries; then
    grep -E '^(MISSING|FORBIDDEN|NOT ON THE DEVICE|UNRESOLVED|MISMATCH)' "$RUN_DIR/libraries.log" >&2
    if [ -e "$NOTES/libraries.usable" ]; then
      echo "gpu-check: torch differs from the bundle's, but every library and symbol resolves: the steps run, marked by it" >&2
    else
      echo "gpu-check: the bundle's libraries or symbols do not resolve here; no step can run" >&2
      exit 1
    fi
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
# The seed-table step runs the bert-base speed table: the real model (configs/seed-table.json's)
# does not fit the device call's carry beside the bundle.
for name, source in (("seed-table", "seed-table-bert-base"), ("offload-gpu", "offload-gpu"),
                     ("nccl-one-rank", "nccl-one-rank")):
    with open(f"configs/{source}.json") as f:
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
step seed-table "$CAP_SEED" "$BIN" run "$CONFIGS/seed-table.json" --out "$RUN_DIR/seed-table" --force --no-cost-check

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
  "$BIN" run "$CONFIGS/offload-gpu.json" --out "$RUN_DIR/offload-gpu" --force --no-cost-check || return 1
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
