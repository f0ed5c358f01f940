#!/usr/bin/env bash
# attnbench's model against what a user would use instead — Hugging Face transformers, ONNX Runtime
# and OpenVINO — best against best within each precision class (fp32; bf16/fp16; int8), on the same
# weights, inputs, dims, batch, length and thread count, timed by one protocol, in rounds whose
# order alternates (A B / B A: odd rounds attnbench first, then the peers; even rounds the peers
# first, then attnbench), so that the drift of a shared machine, within a round as across rounds,
# falls on every engine alike; the peers among themselves run in their listed order in odd rounds
# and in the reverse order in even ones ("engine_place" in each row). Writes results/<name>/peers.md
# (the tables, with the CPU and its features), peers.json (every round's figure of every engine with
# its position in the round, "round_order", and the table) and COMMAND.
#
#   scripts/peer-compare.sh [--rounds 5] [--threads 2] [--shapes 1x128,8x128,8x512,32x128]
#                           [--out results/cpu-peer-compare] [--bin build/attnbench]
#                           [--passes 3] [--batches 4]
#   scripts/peer-compare.sh --setup-only      (only create the peers' environment)
#   scripts/peer-compare.sh --print-order [--rounds N] [--shapes …]   (only print the schedule)
#
# --rounds defaults to 5, the fewest the paired intervals are worth reading at; fewer warn.
#
# The protocol, the same for every engine: per round and shape one warm-up pass, then --passes
# timed passes, each pass --batches forward calls over pre-built inputs of batch × length tokens
# (no padding), timed by the monotonic clock; an engine's round figure is the geometric mean of its
# passes' samples/s. The weights and inputs are shared: scripts/peer_bench.py prepare writes a
# seeded BertForSequenceClassification with minilm-l6's dims (6 layers, hidden 384, 12 heads, ffn
# 1536) and the token ids, attnbench loads both ("model.weights", "workload.file"), the peers too.
#
# Every output is checked. attnbench's variants against its fp32 naive baseline, as in every run
# (only PASS variants count); every peer's logits against that baseline's (relative L2), within its
# class's bound (peer_bench.py: CLASS_BOUND): a peer that computes something else is flagged, not
# counted. The precision classes:
#   fp32       attnbench naive, sdpa, custom, sdpa/custom with "linear": "packed";
#              transformers eager and SDPA; ONNX Runtime on the plain export and on the export
#              through its BERT graph optimiser (onnxruntime-bert-opt: fused attention, layer norms
#              and GELU); OpenVINO with INFERENCE_PRECISION_HINT=f32, with dynamic shapes and
#              reshaped to the static batch × length before compiling (openvino-f32-static)
#   bf16/fp16  attnbench "precision": "amp" and the bf16 cast, sdpa or custom, with ATen's or packed
#              linears (only where the CPU has native bf16; where "amp" resolves to fp32, the class is
#              n/a with the reason); transformers with the model cast to bf16; OpenVINO's default
#              precision when it ran bf16 or fp16 (which it ran is recorded), dynamic and static
#   int8       attnbench "precision": "int8" (encoder linears dynamically quantized, oneDNN's int8
#              matmul; sdpa or custom attention); ONNX Runtime's quantize_dynamic, of the plain
#              export and of the BERT-optimised one (onnxruntime-int8-bert-opt)
# Each optimised or static form is a peer engine of its own, timed and output-checked like the
# others, so "the best peer" is whichever form is faster at that shape.
# Per class and shape: attnbench's fastest PASS variant against the fastest unflagged peer (each by
# its geometric mean over the rounds), the ratio's geometric mean with a paired 95% t interval over
# the rounds, and a verdict read from the interval only, never from the point estimate: ahead (low
# end > 1), behind (high end < 1), level (it holds 1). Every ratio is printed with its interval.
#
# The peers go into their own virtual environment (ATTNBENCH_PEERS_VENV, default
# /opt/attnbench/peers-venv) from the Python package index, never into the project's venv; it
# reuses the project venv's torch through a .pth file instead of downloading a second copy.
# An optional stage: nothing in the test suite times anything. Needs build/attnbench.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[peer-compare] $*" >&2; }

ROUNDS=5
THREADS=2
SHAPES=1x128,8x128,8x512,32x128
OUT=results/cpu-peer-compare
BIN=${ATTNBENCH_BIN:-build/attnbench}
BATCHES=4   # forward calls (batches) per pass, for every engine
PASSES=3    # timed passes per engine per round
SETUP_ONLY=0
PRINT_ORDER=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --shapes) SHAPES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --passes) PASSES=$2; shift 2 ;;
    --batches) BATCHES=$2; shift 2 ;;
    --setup-only) SETUP_ONLY=1; shift ;;
    --print-order) PRINT_ORDER=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "peer-compare: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in ROUNDS THREADS PASSES BATCHES; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "peer-compare: --${v,,} must be a positive integer, got ${!v}" >&2; exit 2; }
done
IFS=, read -r -a shapes <<<"$SHAPES"
for shape in "${shapes[@]}"; do
  [[ "$shape" =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || { echo "peer-compare: a shape is BATCHxLENGTH, got $shape" >&2; exit 2; }
  [ "${shape#*x}" -ge 3 ] && [ "${shape#*x}" -le 512 ] || { echo "peer-compare: a length must be in [3, 512], got $shape" >&2; exit 2; }
done

# The order within a round (A B / B A): attnbench first in odd rounds, the peers first in even ones,
# so that a machine that slows (or speeds up) within a round favours neither side; every row records
# its round and its position in it (1 or 2), peers.json the order of every round.
order_of() { if [ $(($1 % 2)) = 1 ]; then echo "attnbench peers"; else echo "peers attnbench"; fi; }
if [ "$PRINT_ORDER" = 1 ]; then  # the schedule only: nothing is installed, built or timed
  for r in $(seq 1 "$ROUNDS"); do
    for shape in "${shapes[@]}"; do echo "round $r $shape: $(order_of "$r")"; done
  done
  exit 0
fi
[ "$ROUNDS" -ge 5 ] || log "warning: $ROUNDS rounds (fewer than 5): the paired intervals will be wide, most verdicts level"

VENV=${ATTNBENCH_VENV:-/opt/attnbench/venv}
PEERS=${ATTNBENCH_PEERS_VENV:-/opt/attnbench/peers-venv}
# Versions measured with; newer ones may be faster or slower, which is the point of pinning.
PEER_PACKAGES=(transformers==5.24.0 onnxruntime==1.32.0 onnx==1.23.2 openvino==2026.4.1)

if ! "$PEERS/bin/python" -c 'import transformers, onnxruntime, onnx, openvino' 2>/dev/null; then
  log "creating the peers' environment $PEERS (${PEER_PACKAGES[*]})"
  [ -x "$PEERS/bin/python" ] || "$VENV/bin/python" -m venv "$PEERS"
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  peer_site=$("$PEERS/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$site" >"$peer_site/attnbench-torch.pth"  # the project's torch and numpy, read-only
  "$PEERS/bin/python" -m pip install -q "${PEER_PACKAGES[@]}" >&2
fi
[ "$SETUP_ONLY" = 0 ] || { log "the peers' environment $PEERS is ready"; exit 0; }

[ -x "$BIN" ] || { echo "peer-compare: $BIN not found; run scripts/build.sh first" >&2; exit 2; }
features=$(grep -o -w -E 'avx2|fma|avx512f|avx512_vnni|avx512_bf16|avx512_fp16|amx_bf16|amx_int8|amx_fp16' /proc/cpuinfo | sort -u | tr '\n' ' ')
native_bf16=0
case " $features " in *" avx512_bf16 "*|*" amx_bf16 "*) native_bf16=1 ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"
rows="$work/rows.jsonl"
: >"$rows"

# attnbench's variants: the fp32 and int8 classes always (oneDNN's int8 matmul runs on any x86-64:
# VNNI or AMX where present, 7-bit weights where its u8·s8 product would saturate); the bf16 class
# where the CPU multiplies bf16 natively
# (elsewhere "amp" resolves to fp32 and the bf16 cast would run on LibTorch's reference GEMM).
variant() {  # name precision attention [linear]
  local extra=""
  [ -n "${4:-}" ] && extra=", \"linear\": \"$4\""
  printf '    {"name": "%s", "precision": "%s", "attention": "%s"%s, "batching": {"kind": "static", "batch_size": %s, "padding": "longest"}}' \
    "$1" "$2" "$3" "$extra" "$B"
}
attnbench_variants() {
  local list=()
  list+=("$(variant naive fp32 naive)" "$(variant sdpa fp32 sdpa)" "$(variant custom fp32 custom)"
         "$(variant sdpa-packed fp32 sdpa packed)" "$(variant custom-packed fp32 custom packed)"
         "$(variant int8-sdpa int8 sdpa)" "$(variant int8-custom int8 custom)")
  if [ "$native_bf16" = 1 ]; then
    list+=("$(variant amp-sdpa amp sdpa)" "$(variant amp-custom amp custom)"
           "$(variant amp-sdpa-packed amp sdpa packed)" "$(variant amp-custom-packed amp custom packed)"
           "$(variant bf16-sdpa bf16 sdpa)" "$(variant bf16-custom bf16 custom)"
           "$(variant bf16-sdpa-packed bf16 sdpa packed)" "$(variant bf16-custom-packed bf16 custom packed)")
  fi
  local IFS=$'\n'
  echo "${list[*]}" | sed '$!s/$/,/'
}

attnbench_round() {  # batch length round position → one JSON line per variant
  local b=$1 l=$2 r=$3 pos=$4 data="$work/data-${1}x${2}" cfg="$work/cfg-${1}x${2}.json" dir="$work/run-${1}x${2}-$3"
  B=$b
  cat >"$cfg" <<EOF
{
  "name": "peer-${b}x${l}",
  "model": {"weights": "$data/model/model.safetensors", "config": "$data/model/config.json"},
  "workload": {"file": "$data/inputs.jsonl", "max_length": $l},
  "measure": {"warmup": 1, "repetitions": $PASSES},
  "device": "cpu",
  "threads": $THREADS,
  "variants": [
$(attnbench_variants)
  ],
  "baseline": "naive",
  "output": {"dir": "$dir", "formats": ["json"]}
}
EOF
  local rc=0
  "$BIN" run "$cfg" --quiet --force --save-outputs >"$dir.log" 2>&1 || rc=$?
  # 3: an output check failed (that variant is not counted, the others are); anything else ends it.
  [ "$rc" = 0 ] || [ "$rc" = 3 ] || { cat "$dir.log" >&2; log "attnbench run failed (exit $rc)"; exit 1; }
  [ -f "$data/reference.npy" ] || cp "$dir/outputs/naive.npy" "$data/reference.npy"
  "$VENV/bin/python" - "$dir/results.json" "$b" "$l" "$r" "$BATCHES" "$pos" >>"$rows" <<'EOF'
import json, math, sys
res = json.load(open(sys.argv[1]))
for v in res["variants"]:
    dtype = v.get("compute_dtype", "fp32")
    klass = {"bf16": "bf16", "fp16": "bf16", "int8": "int8"}.get(dtype, "fp32")
    row = {"engine": "attnbench-" + v["name"], "batch": int(sys.argv[2]), "length": int(sys.argv[3]),
           "round": int(sys.argv[4]), "position": int(sys.argv[6]), "class": klass, "ran": v.get("precision", dtype), "status": v["status"],
           "reason": v.get("reason", ""), "rel_l2": (v.get("check") or {}).get("rel_l2")}
    top1 = (v.get("check") or {}).get("top1_agreement")
    if top1 is not None:  # predictions kept: the samples whose top-1 the baseline's agrees with
        row["compared"] = int(sys.argv[2]) * int(sys.argv[5])
        row["kept"] = round(top1 * row["compared"])
    if v["status"] == "PASS":
        row["samples_per_s"] = v["throughput"]["geomean"]
    print(json.dumps(row))
EOF
}

peers_round() {  # batch length round position
  local b=$1 l=$2 r=$3 pos=$4 data="$work/data-${1}x${2}"
  local reverse=()
  [ $((r % 2)) = 1 ] || reverse=(--reverse)  # the peers among themselves alternate too
  "$PEERS/bin/python" scripts/peer_bench.py run --dir "$data" --batch "$b" --length "$l" --batches "$BATCHES" \
    --threads "$THREADS" --passes "$PASSES" --reference "$data/reference.npy" "${reverse[@]}" 2>>"$work/peers.log" |
    "$VENV/bin/python" -c 'import json, sys
for line in sys.stdin:
    row = json.loads(line); row["round"] = int(sys.argv[1]); row["position"] = int(sys.argv[2]); print(json.dumps(row))' \
    "$r" "$pos" >>"$rows"
}

start=$(date +%s)
for shape in "${shapes[@]}"; do
  b=${shape%x*}; l=${shape#*x}
  log "${b}×${l}: preparing the shared weights, inputs and ONNX models"
  "$PEERS/bin/python" scripts/peer_bench.py prepare --dir "$work/data-${b}x${l}" --batch "$b" --length "$l" \
    --batches "$BATCHES" 2>>"$work/peers.log" || { cat "$work/peers.log" >&2; exit 1; }
done
for r in $(seq 1 "$ROUNDS"); do
  for shape in "${shapes[@]}"; do
    b=${shape%x*}; l=${shape#*x}
    pos=0
    for group in $(order_of "$r"); do
      pos=$((pos + 1))
      if [ "$group" = attnbench ]; then
        log "round $r/$ROUNDS, ${b}×${l}, $pos of 2: attnbench"
        attnbench_round "$b" "$l" "$r" "$pos"
      else
        log "round $r/$ROUNDS, ${b}×${l}, $pos of 2: transformers, ONNX Runtime, OpenVINO"
        peers_round "$b" "$l" "$r" "$pos"
      fi
    done
  done
done
wall=$(($(date +%s) - start))

versions=$("$PEERS/bin/python" -c 'import torch, transformers, onnxruntime, openvino; print(f"torch {torch.__version__}, transformers {transformers.__version__}, onnxruntime {onnxruntime.__version__}, openvino {openvino.__version__}")' 2>/dev/null)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cpu_id=$(awk -F': ' '/^vendor_id/ {v=$2} /^cpu family/ {f=$2} /^model\t/ {m=$2} /^stepping/ {s=$2; print v " family " f " model " m " stepping " s; exit}' /proc/cpuinfo)
"$VENV/bin/python" scripts/peer_table.py "$rows" "$OUT" "$cpu" "$cpu_id" "$features" "$versions" "$THREADS" "$ROUNDS" \
  "$BATCHES" "$PASSES" "$native_bf16"
{
  echo "# Made by this command, from the repository root, at commit $(git rev-parse --short=12 HEAD):"
  echo "scripts/peer-compare.sh --rounds $ROUNDS --threads $THREADS --shapes $SHAPES --out $OUT --passes $PASSES --batches $BATCHES"
  echo "# Machine: $cpu ($cpu_id), $(nproc) cores; CPU features: ${features:-none detected}. $versions."
  echo "# Date: $(date -u +%Y-%m-%dT%H:%M:%SZ); wall time $wall s."
} >"$OUT/COMMAND"
