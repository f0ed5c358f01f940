#!/usr/bin/env bash
# The GPU check (issue 16): everything attnbench does on a GPU, in one call, within a budget of
# device time (default 480 s = 8 minutes, build included):
#   1. build            scripts/build.sh into ATTNBENCH_BUILD_DIR (default build/): a build
#                       directory carried over from an earlier build is reused, so only what
#                       changed recompiles (--skip-build: use it as it is)
#   2. gpu-tests        every [gpu] test of the suite; on a GPU machine a [gpu] test that skips
#                       fails the check (no GPU seen is a failure there, not a pass)
#   3. seed-table       attnbench run configs/seed-table.json (bert-base, the article's rows)
#   4. offload-gpu      attnbench run configs/offload-gpu.json: under its device_memory_limit the
#                       resident variant must be SKIPPED as OOM and every offload variant PASS
#                       with its measured device weights under the limit
#   5. attention        a short attnbench attention grid (fp16/bf16, seq 512-4096)
# Everything goes under one folder (--out, default results/gpu-check-<UTC time>): each step's
# log and outputs, device.txt (the GPU, driver, toolkit, commit), and SUMMARY.md (each step's
# status and seconds). Exit status: 0 when every step passed, 1 when one failed or ran out of
# budget, 2 for a bad command line.
#
#   scripts/gpu-check.sh [--out DIR] [--budget-s 480] [--skip-build] [--cpu-dry-run]
#
# --cpu-dry-run runs the same steps on the CPU, so that only the device itself is untested when
# a GPU comes: the [gpu] tests skip (as they must without a GPU), the two configs are copied into
# OUT/configs/ cut to smoke size (fewer samples, shorter sequences, smaller models, device cpu,
# offload target "cpu") and the attention grid runs at CPU sizes. Its figures mean nothing;
# its folder says "CPU dry run" in SUMMARY.md and device.txt.
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=""
BUDGET_S=480
BUILD=1
DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=${2:?--out needs a directory}; shift 2 ;;
    --budget-s) BUDGET_S=${2:?--budget-s needs seconds}; shift 2 ;;
    --skip-build) BUILD=0; shift ;;
    --cpu-dry-run) DRY=1; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$BUDGET_S" in ''|*[!0-9]*) echo "gpu-check: --budget-s must be a whole number of seconds" >&2; exit 2 ;; esac
[ -n "$OUT" ] || OUT="results/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)"
BUILD_DIR=${ATTNBENCH_BUILD_DIR:-build}
PY=${ATTNBENCH_PYTHON:-python3}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
BIN="$BUILD_DIR/attnbench"
TESTS="$BUILD_DIR/tests/attnbench_tests"
MODE=$([ "$DRY" = 1 ] && echo "CPU dry run (no GPU used: figures mean nothing)" || echo "GPU")

# Each step's cap, in seconds; the budget left caps it further. The estimates behind them are for
# a 16-core H200 machine and have not been measured (no GPU has run this script yet).
CAP_BUILD=240
CAP_TESTS=90
CAP_SEED=150
CAP_OFFLOAD=120
CAP_ATTENTION=60

SECONDS=0
failed=0
summary=()

# step NAME CAP COMMAND…: runs COMMAND with its output in OUT/NAME.log, under the smaller of CAP
# and the budget left; records PASS / FAIL / TIMEOUT / NO BUDGET and the seconds it took.
step() {
  local name=$1 cap=$2
  shift 2
  local left=$((BUDGET_S - SECONDS))
  local limit=$((cap < left ? cap : left))
  if [ "$limit" -le 0 ]; then
    summary+=("| $name | NO BUDGET | 0 |")
    failed=1
    echo "gpu-check: $name: no budget left" >&2
    return 1
  fi
  local start=$SECONDS rc=0
  echo "gpu-check: $name (at most ${limit}s)" >&2
  if declare -F "$1" >/dev/null; then  # a function of this script: run in a child bash to time it out
    timeout --kill-after=10 "$limit" bash -c "$*" >"$OUT/$name.log" 2>&1 || rc=$?
  else
    timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
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
  [ "$status" = PASS ]
}

describe_device() {
  echo "mode: $MODE"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "host: $(hostname)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores)"
  if [ "$DRY" = 0 ]; then
    nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap --format=csv 2>&1 || echo "nvidia-smi failed"
    [ -x /usr/local/cuda/bin/nvcc ] && /usr/local/cuda/bin/nvcc --version | tail -1
  fi
}
describe_device >"$OUT/device.txt"
if [ "$DRY" = 0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no GPU visible (nvidia-smi -L failed); on a machine without one use --cpu-dry-run" >&2
  exit 1
fi

# 1. build
if [ "$BUILD" = 1 ]; then
  step build "$CAP_BUILD" env ATTNBENCH_BUILD_DIR="$BUILD_DIR" scripts/build.sh
fi

# 2. every [gpu] test. On a GPU machine a skip means the tests saw no GPU: that fails the check.
gpu_tests() {
  # Unset: with it a skipping test ends the whole binary (that is how CTest learns of a skip).
  env -u ATTNBENCH_SKIP_RETURN_CODE "$TESTS" "[gpu]" --durations yes || return 1
  if [ "$DRY" = 0 ] && grep -q "SKIPPED:\|no CUDA device" "$OUT/gpu-tests.log"; then
    echo "gpu-check: a [gpu] test skipped on the GPU machine" >&2
    return 1
  fi
}
export DRY OUT TESTS BIN PY CONFIGS
export -f gpu_tests
step gpu-tests "$CAP_TESTS" gpu_tests

# The configs as shipped on a GPU; on the CPU dry run, copies cut to smoke size.
CONFIGS="$OUT/configs"
mkdir -p "$CONFIGS"
"$PY" - "$DRY" "$CONFIGS" <<'PYEOF' || failed=1
import json, sys
dry, out = sys.argv[1] == "1", sys.argv[2]
for name in ("seed-table", "offload-gpu"):
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
            cfg["model"]["preset"] = "bert-tiny"  # bert-base's fp16 rows take minutes on a CPU
        if name == "offload-gpu":
            # The same variants on a model a CPU runs in a second; the limit stays (not applied).
            cfg["model"].update({"layers": 4, "hidden": 256, "heads": 4, "ffn": 1024})
        for v in cfg["variants"]:
            if "offload" in v:
                v["offload"]["target"] = "cpu"
            if v.get("batching", {}).get("kind") == "dynamic":
                v["batching"]["max_tokens"] = 256
            if "parallel" in v:
                v["parallel"]["devices"] = ["cpu", "cpu"]
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(cfg, f, indent=2)
PYEOF

# 3. the article's table on bert-base
step seed-table "$CAP_SEED" "$BIN" run "$CONFIGS/seed-table.json" --out "$OUT/seed-table" --force

# 4. offload under a memory limit, then what its results must say
offload_check() {
  "$BIN" run "$CONFIGS/offload-gpu.json" --out "$OUT/offload-gpu" --force || return 1
  "$PY" - "$DRY" "$OUT/offload-gpu/results.json" <<'PYEOF'
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

# 5. attention alone
if [ "$DRY" = 1 ]; then
  step attention "$CAP_ATTENTION" "$BIN" attention --device cpu --seq 64,128 --dtype fp32 --causal false \
    --warmup 0 --repetitions 1 --out "$OUT/attention" --force
else
  step attention "$CAP_ATTENTION" "$BIN" attention --device cuda --seq 512,1024,2048,4096 --dtype fp16,bf16 \
    --causal false,true --warmup 1 --repetitions 5 --out "$OUT/attention" --force
fi

{
  echo "# GPU check: $MODE"
  echo
  echo "\`scripts/gpu-check.sh $([ "$DRY" = 1 ] && echo '--cpu-dry-run ')--budget-s $BUDGET_S\`, $(date -u +%Y-%m-%dT%H:%M:%SZ), ${SECONDS}s of ${BUDGET_S}s."
  echo
  echo "| step | status | seconds |"
  echo "|---|---|---:|"
  printf '%s\n' "${summary[@]}"
  echo
  echo "The device, driver, toolkit and commit: device.txt. Each step's output: <step>.log and its folder."
} >"$OUT/SUMMARY.md"
cat "$OUT/SUMMARY.md"
exit "$failed"
