#!/usr/bin/env bash
# attnbench's model against what a user would use instead: Hugging Face transformers (eager and
# SDPA attention) and ONNX Runtime, at the same BERT dims, batch, length and thread count, in
# alternating rounds (attnbench, then the peers, then attnbench again …) so that the drift of a
# shared machine falls on every engine alike. Writes results/<name>/peers.md (the table, with the
# CPU and its features), peers.json (every round's figure) and COMMAND.
#
#   scripts/peer-compare.sh [--rounds 3] [--threads 2] [--shapes 1x128,8x128,8x512,32x128]
#                           [--out results/cpu-peer-compare] [--bin build/attnbench]
#
# The peers go into their own virtual environment (ATTNBENCH_PEERS_VENV, default
# /opt/attnbench/peers-venv) from the Python package index, never into the project's venv; it
# reuses the project venv's torch through a .pth file instead of downloading a second copy.
# An optional stage: nothing in the test suite times anything. Needs build/attnbench.
#
# attnbench runs the minilm-l6 preset (6 layers, hidden 384, 12 heads) with random weights, fp32,
# fixed-length samples in static batches (no padding), its naive and SDPA attention and its own
# CPU kernel (attention custom: kernels/cpu), with ATen's linears and with weights pre-packed for
# oneDNN ("linear": "packed", as ONNX Runtime packs its weights at load); its figure is the
# fastest of the five (geometric mean of its timed rounds), every output checked against the
# naive baseline's as in every run. The peers run the same dims (scripts/peer_bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=3
THREADS=2
SHAPES=1x128,8x128,8x512,32x128
OUT=results/cpu-peer-compare
BIN=${ATTNBENCH_BIN:-build/attnbench}
BATCHES=4          # forward calls (batches) per pass, for every engine
PEER_MIN_TIME=3    # seconds of timed passes per peer per round
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --shapes) SHAPES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "peer-compare: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "peer-compare: --rounds must be a positive integer, got $ROUNDS" >&2; exit 2; }
[[ "$THREADS" =~ ^[1-9][0-9]*$ ]] || { echo "peer-compare: --threads must be a positive integer, got $THREADS" >&2; exit 2; }
[ -x "$BIN" ] || { echo "peer-compare: $BIN not found; run scripts/build.sh first" >&2; exit 2; }

VENV=${ATTNBENCH_VENV:-/opt/attnbench/venv}
PEERS=${ATTNBENCH_PEERS_VENV:-/opt/attnbench/peers-venv}
# Versions measured with; newer ones may be faster or slower, which is the point of pinning.
PEER_PACKAGES=(transformers==5.24.0 onnxruntime==1.32.0 onnx==1.23.2)
log() { echo "[peer-compare] $*" >&2; }

if ! "$PEERS/bin/python" -c 'import transformers, onnxruntime, onnx' 2>/dev/null; then
  log "creating the peers' environment $PEERS (transformers, onnxruntime, onnx)"
  "$VENV/bin/python" -m venv "$PEERS"
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  peer_site=$("$PEERS/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$site" >"$peer_site/attnbench-torch.pth"  # the project's torch and numpy, read-only
  "$PEERS/bin/python" -m pip install -q "${PEER_PACKAGES[@]}" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"
rows="$work/rows.jsonl"
: >"$rows"

attnbench_round() {  # batch length round → one JSON line per attention kind
  local b=$1 l=$2 r=$3 cfg="$work/cfg-${b}x${l}.json" dir="$work/run-${b}x${l}-$r"
  cat >"$cfg" <<EOF
{
  "name": "peer-${b}x${l}",
  "model": {"preset": "minilm-l6", "seed": 0},
  "workload": {"samples": $((b * BATCHES)), "lengths": {"kind": "fixed", "length": $l}, "max_length": $l, "seed": 0},
  "measure": {"warmup": 1, "repetitions": 3},
  "device": "cpu",
  "threads": $THREADS,
  "variants": [
    {"name": "naive", "precision": "fp32", "attention": "naive", "batching": {"kind": "static", "batch_size": $b, "padding": "longest"}},
    {"name": "sdpa", "precision": "fp32", "attention": "sdpa", "batching": {"kind": "static", "batch_size": $b, "padding": "longest"}},
    {"name": "custom", "precision": "fp32", "attention": "custom", "batching": {"kind": "static", "batch_size": $b, "padding": "longest"}},
    {"name": "sdpa-packed", "precision": "fp32", "attention": "sdpa", "linear": "packed", "batching": {"kind": "static", "batch_size": $b, "padding": "longest"}},
    {"name": "custom-packed", "precision": "fp32", "attention": "custom", "linear": "packed", "batching": {"kind": "static", "batch_size": $b, "padding": "longest"}}
  ],
  "baseline": "naive",
  "output": {"dir": "$dir", "formats": ["json"]}
}
EOF
  "$BIN" run "$cfg" --quiet --force >/dev/null
  "$VENV/bin/python" - "$dir/results.json" "$b" "$l" "$r" >>"$rows" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
for v in res["variants"]:
    assert v["status"] == "PASS", f"attnbench variant {v['name']} is {v['status']}: {v['reason']}"
    print(json.dumps({"engine": "attnbench-" + v["name"], "batch": int(sys.argv[2]), "length": int(sys.argv[3]),
                      "round": int(sys.argv[4]), "samples_per_s": v["throughput"]["geomean"]}))
EOF
}

peers_round() {
  local b=$1 l=$2 r=$3
  "$PEERS/bin/python" scripts/peer_bench.py --batch "$b" --length "$l" --batches "$BATCHES" --threads "$THREADS" \
    --min-time "$PEER_MIN_TIME" --onnx-cache "$work/onnx" 2>/dev/null |
    "$VENV/bin/python" -c 'import json, sys
for line in sys.stdin:
    row = json.loads(line); row["round"] = int(sys.argv[1]); print(json.dumps(row))' "$r" >>"$rows"
}

IFS=, read -r -a shapes <<<"$SHAPES"
for shape in "${shapes[@]}"; do
  [[ "$shape" =~ ^([1-9][0-9]*)x([1-9][0-9]*)$ ]] || { echo "peer-compare: a shape is BATCHxLENGTH, got $shape" >&2; exit 2; }
done
start=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
  for shape in "${shapes[@]}"; do
    b=${shape%x*}; l=${shape#*x}
    log "round $r/$ROUNDS, ${b}×${l}: attnbench"
    attnbench_round "$b" "$l" "$r"
    log "round $r/$ROUNDS, ${b}×${l}: transformers, onnxruntime"
    peers_round "$b" "$l" "$r"
  done
done
wall=$(($(date +%s) - start))

versions=$("$PEERS/bin/python" -c 'import torch, transformers, onnxruntime; print(f"torch {torch.__version__}, transformers {transformers.__version__}, onnxruntime {onnxruntime.__version__}")' 2>/dev/null)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
cpu_id=$(awk -F': ' '/^vendor_id/ {v=$2} /^cpu family/ {f=$2} /^model\t/ {m=$2} /^stepping/ {s=$2; print v " family " f " model " m " stepping " s; exit}' /proc/cpuinfo)
features=$(grep -o -w -E 'avx2|fma|avx512f|avx512_bf16|avx512_fp16|amx_bf16|amx_fp16' /proc/cpuinfo | sort -u | tr '\n' ' ')
"$VENV/bin/python" - "$rows" "$OUT" "$cpu" "$cpu_id" "$features" "$versions" "$THREADS" "$ROUNDS" "$BATCHES" <<'EOF'
import json, math, os, sys
rows_path, out, cpu, cpu_id, features, versions, threads, rounds, batches = sys.argv[1:]
rows = [json.loads(l) for l in open(rows_path)]
def gm(xs): return math.exp(sum(math.log(x) for x in xs) / len(xs))
shapes = sorted({(r["batch"], r["length"]) for r in rows}, key=lambda s: (s[1], s[0]))
table = {}
for b, l in shapes:
    per = {}
    for r in rows:
        if (r["batch"], r["length"]) == (b, l):
            per.setdefault(r["engine"], []).append(r["samples_per_s"])
    table[(b, l)] = {e: gm(v) for e, v in per.items()}
lines = [f"# attnbench against transformers and ONNX Runtime", "",
         f"CPU {cpu} ({cpu_id}), features: {features.strip() or 'none detected'}; {threads} threads; {versions}.",
         f"minilm-l6 dims (6 layers, hidden 384, 12 heads, ffn 1536), random weights, fp32, fixed lengths (no padding), "
         f"{batches} batches per pass; {rounds} alternating rounds, each figure the geometric mean over them (samples/s).",
         "attnbench's figure is its fastest variant at that shape: attention naive, SDPA or its own kernel (custom), "
         "with ATen's linears or with weights pre-packed for oneDNN (packed), all checked against naive.", "",
         "| batch × length | attnbench fp32 (best) | attnbench naive | attnbench sdpa | attnbench custom | attnbench sdpa packed | attnbench custom packed | transformers eager | transformers sdpa | ONNX Runtime | attnbench / transformers sdpa | attnbench / ONNX Runtime |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
out_rows = []
for (b, l), t in table.items():
    best = max(v for e, v in t.items() if e.startswith("attnbench-"))
    hf, ort = t.get("transformers-sdpa"), t.get("onnxruntime")
    f = lambda x: f"{x:.3g}" if x else "n/a"
    lines.append(f"| {b} × {l} | {f(best)} | {f(t.get('attnbench-naive'))} | {f(t.get('attnbench-sdpa'))} | "
                 f"{f(t.get('attnbench-custom'))} | {f(t.get('attnbench-sdpa-packed'))} | {f(t.get('attnbench-custom-packed'))} | "
                 f"{f(t.get('transformers-eager'))} | {f(hf)} | {f(ort)} | {best / hf:.2f} | {best / ort:.2f} |")
    out_rows.append({"batch": b, "length": l, "attnbench_best": best, **{k.replace('-', '_'): v for k, v in t.items()},
                     "ratio_transformers_sdpa": best / hf, "ratio_onnxruntime": best / ort})
os.makedirs(out, exist_ok=True)
open(os.path.join(out, "peers.md"), "w").write("\n".join(lines) + "\n")
json.dump({"cpu": cpu, "cpu_id": cpu_id, "cpu_features": features.split(), "threads": int(threads), "versions": versions,
           "rounds": rows, "table": out_rows}, open(os.path.join(out, "peers.json"), "w"), indent=1)
print("\n".join(lines))
EOF
{
  echo "# Made by this command, from the repository root, at commit $(git rev-parse --short=12 HEAD):"
  echo "scripts/peer-compare.sh --rounds $ROUNDS --threads $THREADS --shapes $SHAPES --out $OUT"
  echo "# Machine: $cpu ($cpu_id), $(nproc) cores; CPU features: ${features:-none detected}. $versions."
  echo "# Date: $(date -u +%Y-%m-%dT%H:%M:%SZ); wall time $wall s."
} >"$OUT/COMMAND"
