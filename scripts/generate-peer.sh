#!/usr/bin/env bash
# transformers' generate() beside attnbench's generate scenario, on the same weights, prompts,
# threads and clock (issue 41 part 6; docs/generate.md#a-peer-transformers-generate).
#
#   scripts/generate-peer.sh [--rounds 3] [--threads 2] [--preset llama-160m] [--prompts 4]
#                            [--length 64] [--new-tokens 32] [--passes 3] [--out DIR]
#                            [--text FILE] [--tokenizer FILE] [--random-ids]
#
# scripts/generate_peer.py (in the reference environment scripts/setup.sh makes, with
# transformers) writes seeded random weights in the preset's shape, the prompts and attnbench's
# config into DIR (the prompts: the first --prompts lines of --text, by default the corpus
# configs/data/handbook-corpus.txt, through --tokenizer, by default configs/data/handbook-bpe.json,
# cut to --length tokens; --random-ids: seeded ids of --length tokens); then each round runs attnbench (`run --save-outputs`, its tokens kept) and the
# peers (transformers with SDPA and with eager attention, fp32), attnbench first in odd rounds and
# last in even ones; `generate_peer.py table` writes DIR/peers.md and DIR/peers.json, every peer's
# tokens checked against attnbench's. Exits 2 on a bad argument, 3 where transformers is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=3 THREADS=2 PRESET=llama-160m PROMPTS=4 LENGTH=64 NEW=32 PASSES=3 OUT=results/generate-peer
TEXT=configs/data/handbook-corpus.txt TOKENIZER=configs/data/handbook-bpe.json RANDOM_IDS=
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --preset) PRESET=$2; shift 2 ;;
    --prompts) PROMPTS=$2; shift 2 ;;
    --length) LENGTH=$2; shift 2 ;;
    --new-tokens) NEW=$2; shift 2 ;;
    --passes) PASSES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --text) TEXT=$2; shift 2 ;;
    --tokenizer) TOKENIZER=$2; shift 2 ;;
    --random-ids) RANDOM_IDS=--random-ids; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "generate-peer.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$ROUNDS" "$THREADS" "$PROMPTS" "$LENGTH" "$NEW" "$PASSES"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "generate-peer.sh: $n is not a positive integer" >&2; exit 2; }
done
[ "$NEW" -ge 2 ] || { echo "generate-peer.sh: --new-tokens must be at least 2 (one prefill token, one decode step)" >&2; exit 2; }
if [ -z "$RANDOM_IDS" ]; then
  for f in "$TEXT" "$TOKENIZER"; do
    [ -r "$f" ] || { echo "generate-peer.sh: cannot read $f (--text, --tokenizer)" >&2; exit 2; }
  done
fi

PY=${ATTNBENCH_REFERENCE_VENV:-/opt/attnbench/reference-venv}/bin/python
[ -x "$PY" ] || { echo "generate-peer.sh: no reference environment at $PY (scripts/setup.sh makes it)" >&2; exit 3; }
BIN=${ATTNBENCH_BIN:-build/attnbench}
[ -x "$BIN" ] || { echo "generate-peer.sh: no $BIN (build first: scripts/build.sh)" >&2; exit 2; }

mkdir -p "$OUT"
rm -rf "$OUT"/attnbench-r* "$OUT/rounds.jsonl"
"$PY" scripts/generate_peer.py prepare --out "$OUT" --preset "$PRESET" --prompts "$PROMPTS" --length "$LENGTH" \
  --new-tokens "$NEW" --threads "$THREADS" --passes "$PASSES" --text "$TEXT" --tokenizer "$TOKENIZER" $RANDOM_IDS

PEERS=(hf-sdpa hf-eager)
run_ours() {
  echo "[generate-peer] round $1: attnbench" >&2
  "$BIN" run "$OUT/config.json" --out "$OUT/attnbench-r$1" --save-outputs --force -q > /dev/null
}
run_peer() {
  echo "[generate-peer] round $1: $2" >&2
  "$PY" scripts/generate_peer.py bench --dir "$OUT" --engine "$2" --passes "$PASSES" --threads "$THREADS" | tail -n 1 |
    "$PY" -c "import json,sys; r=json.load(sys.stdin); r.update(round=$1, place=$3); print(json.dumps(r))" \
    >> "$OUT/rounds.jsonl"
}
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2 == 1)); then
    run_ours "$r"
    place=2
    for p in "${PEERS[@]}"; do run_peer "$r" "$p" "$place"; place=$((place + 1)); done
  else
    place=1
    for ((i = ${#PEERS[@]} - 1; i >= 0; i--)); do run_peer "$r" "${PEERS[$i]}" "$place"; place=$((place + 1)); done
    run_ours "$r"
  fi
done
"$PY" scripts/generate_peer.py table --dir "$OUT"
{
  echo "# Made by this command, from the repository root, at commit $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- src scripts || echo -dirty):"
  echo "scripts/generate-peer.sh --rounds $ROUNDS --threads $THREADS --preset $PRESET --prompts $PROMPTS --length $LENGTH --new-tokens $NEW --passes $PASSES --out $OUT$( [ -n "$RANDOM_IDS" ] && echo " --random-ids" || echo " --text $TEXT --tokenizer $TOKENIZER")"
  echo "# Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) logical CPUs ($(awk -F': ' '/^vendor_id/{v=$2} /^cpu family/{f=$2} /^model\t/{m=$2} END{printf "%s family %s model %s", v, f, m}' /proc/cpuinfo)); $(date -u +%FT%TZ)"
} > "$OUT/COMMAND"
# The weights are reproducible from the seed: not kept beside the tables.
rm -rf "$OUT/model"
