#!/usr/bin/env bash
# Performance regression check for CI: runs configs/ci.json and compares it with the committed
# baseline, results/ci-baseline/results.json. Builds nothing: it expects build/attnbench
# (scripts/build.sh). README "CI regression runs" explains the numbers.
#
#   scripts/ci-regression.sh                       run, compare, exit with compare's status
#   scripts/ci-regression.sh -- --threshold 15%    the same, extra arguments go to `attnbench compare`
#   scripts/ci-regression.sh --update-baseline     rerun and replace results/ci-baseline/
#
# Environment:
#   ATTNBENCH_BIN           the binary (default build/attnbench)
#   ATTNBENCH_CI_OUT        directory for the run's results, compare.json, compare.md and the JUnit
#                           files run-junit.xml and compare-junit.xml (default: a new temporary one)
#   ATTNBENCH_CI_THRESHOLD  compare's --threshold (default: compare's, 15%; README says why)
#   GITHUB_STEP_SUMMARY     set by GitHub Actions: the comparison's markdown is appended to it
#
# Exit status: compare's (0 no regression, 1 regression, 2 bad input such as a missing or
# incompatible baseline); the run's own when it produced no results (2 bad config, 4 runtime error).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${ATTNBENCH_BIN:-build/attnbench}
CONFIG=configs/ci.json
BASELINE_DIR=results/ci-baseline
THRESHOLD=${ATTNBENCH_CI_THRESHOLD:-}

update=0
compare_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update-baseline) update=1 ;;
    --) shift; compare_args=("$@"); break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "ci-regression.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ ! -x "$BIN" ]; then
  echo "ci-regression.sh: $BIN not found; build it first (scripts/build.sh) or set ATTNBENCH_BIN" >&2
  exit 2
fi

# A field of results.json's environment block, without needing jq or python on the runner.
env_field() { sed -n "s/^    \"$1\": \"\(.*\)\",\$/\1/p" "$2" | head -n 1; }

if [ "$update" = 1 ]; then
  # --force: the committed baseline is replaced as a whole, throughput.svg and all.
  status=0
  "$BIN" run "$CONFIG" --out "$BASELINE_DIR" --force --quiet || status=$?
  if [ "$status" != 0 ]; then
    echo "ci-regression.sh: the run exited $status; $BASELINE_DIR holds what it wrote, do not commit it" >&2
    exit "$status"
  fi
  results="$BASELINE_DIR/results.json"
  memory_gib=$(awk '/MemTotal/ {printf "%d", $2 / 1048576}' /proc/meminfo)
  gpu="no GPU"
  if command -v nvidia-smi > /dev/null 2>&1; then
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1 || true)
    gpu=${gpu:-no GPU}
  fi
  {
    echo "# Made by this command, from the repository root, at commit $(env_field git_commit "$results"):"
    echo "scripts/ci-regression.sh --update-baseline"
    echo "# which ran: $BIN run $CONFIG --out $BASELINE_DIR --force --quiet"
    echo "# Machine: $(env_field cpu_model "$results"), $(nproc) cores, $memory_gib GiB, $gpu; host $(env_field hostname "$results"); torch $(env_field torch_version "$results")."
    echo "# Date: $(env_field date "$results")"
  } > "$BASELINE_DIR/COMMAND"
  echo "ci-regression.sh: refreshed $BASELINE_DIR; review and commit it" >&2
  exit 0
fi

if [ ! -f "$BASELINE_DIR/results.json" ]; then
  echo "ci-regression.sh: no baseline at $BASELINE_DIR/results.json; make one with --update-baseline" >&2
  exit 2
fi

out=${ATTNBENCH_CI_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/attnbench-ci.XXXXXX")}
mkdir -p "$out"
echo "ci-regression.sh: writing to $out" >&2

# A FAIL (exit 3) still writes every report; compare turns it into "newly failing" (exit 1).
status=0
"$BIN" run "$CONFIG" --out "$out/run" --junit "$out/run-junit.xml" --force --quiet > /dev/null || status=$?
if [ "$status" != 0 ] && [ "$status" != 3 ]; then
  echo "ci-regression.sh: the run exited $status without results" >&2
  exit "$status"
fi

status=0
threshold_args=()
[ -n "$THRESHOLD" ] && threshold_args=(--threshold "$THRESHOLD")
"$BIN" compare "$BASELINE_DIR/results.json" "$out/run/results.json" --out "$out" \
  --junit "$out/compare-junit.xml" --force ${threshold_args[@]+"${threshold_args[@]}"} \
  ${compare_args[@]+"${compare_args[@]}"} || status=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/compare.md" ]; then
  cat "$out/compare.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
