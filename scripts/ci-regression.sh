#!/usr/bin/env bash
# Performance regression check for CI. README "CI regression runs" explains the numbers.
#
#   scripts/ci-regression.sh --ab BASE_REF         build BASE_REF (a commit, branch or tag) in a git
#                                                  worktree, then `attnbench ab` it against
#                                                  build/attnbench on configs/ci-ab.json: both builds
#                                                  in one interleaved run; exit with ab's status
#   scripts/ci-regression.sh                       run configs/ci.json, compare with the committed
#                                                  baseline results/ci-baseline/results.json
#   scripts/ci-regression.sh -- --threshold 15%    the same, extra arguments go to `attnbench compare`
#                                                  (with --ab: to `attnbench ab`)
#   scripts/ci-regression.sh --update-baseline     rerun and replace results/ci-baseline/
#
# The candidate is build/attnbench (scripts/build.sh): the script builds only the base commit.
# A base commit older than `attnbench ab` cannot serve passes: ab then exits 2 saying so, and the
# stored-baseline path is the one that works for it.
#
# Environment:
#   ATTNBENCH_BIN           the binary (default build/attnbench)
#   ATTNBENCH_CI_OUT        directory for the run's results, compare.json, compare.md and the JUnit
#                           files run-junit.xml and compare-junit.xml (default: a new temporary one)
#   ATTNBENCH_CI_THRESHOLD  compare's --threshold (default: compare's, 15%; README says why), or
#                           with --ab, ab's (default: ab's, 5%)
#   ATTNBENCH_CI_AB_CONFIG  the config --ab runs (default configs/ci-ab.json)
#   ATTNBENCH_JOBS          parallel compile jobs for the base build (default: nproc)
#   GITHUB_STEP_SUMMARY     set by GitHub Actions: the comparison's markdown is appended to it
#
# Exit status: compare's or ab's (0 no regression, 1 regression, 2 bad input such as a missing or
# incompatible baseline, or a base build that cannot serve); the run's own when it produced no
# results (2 bad config, 4 runtime error); 2 when BASE_REF does not name a commit.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${ATTNBENCH_BIN:-build/attnbench}
CONFIG=configs/ci.json
BASELINE_DIR=results/ci-baseline
THRESHOLD=${ATTNBENCH_CI_THRESHOLD:-}

update=0
ab_ref=""
compare_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update-baseline) update=1 ;;
    --ab)
      [ $# -ge 2 ] || { echo "ci-regression.sh: --ab needs a git ref (commit, branch, tag)" >&2; exit 2; }
      ab_ref=$2
      shift ;;
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

if [ -n "$ab_ref" ]; then
  AB_CONFIG=${ATTNBENCH_CI_AB_CONFIG:-configs/ci-ab.json}
  if ! base_commit=$(git rev-parse --verify --quiet "$ab_ref^{commit}"); then
    echo "ci-regression.sh: --ab $ab_ref does not name a commit of this repository (fetch it first: CI checkouts are often shallow)" >&2
    exit 2
  fi
  out=${ATTNBENCH_CI_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/attnbench-ci.XXXXXX")}
  mkdir -p "$out"
  base_src=$(mktemp -d "${TMPDIR:-/tmp}/attnbench-ab-base.XXXXXX")
  cleanup() { git worktree remove --force "$base_src" > /dev/null 2>&1 || rm -rf "$base_src"; }
  trap cleanup EXIT
  echo "ci-regression.sh: building the base $ab_ref ($base_commit) in $base_src; writing to $out" >&2
  git worktree add --detach --force "$base_src" "$base_commit" > /dev/null
  prefix=${CMAKE_PREFIX_PATH:-$("${ATTNBENCH_VENV:-/opt/attnbench/venv}/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')}
  # ccache (CMakeLists.txt makes paths relative to the source tree) hits every file the candidate's
  # build compiled the same way: only what changed since BASE_REF compiles.
  cmake -S "$base_src" -B "$base_src/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DATTNBENCH_BUILD_TESTS=OFF > /dev/null
  cmake --build "$base_src/build" --target attnbench -j "${ATTNBENCH_JOBS:-$(nproc)}" >&2
  status=0
  threshold_args=()
  [ -n "$THRESHOLD" ] && threshold_args=(--threshold "$THRESHOLD")
  "$BIN" ab --base "$base_src/build/attnbench" --candidate "$BIN" "$AB_CONFIG" --out "$out" \
    --junit "$out/ab-junit.xml" --force ${threshold_args[@]+"${threshold_args[@]}"} \
    ${compare_args[@]+"${compare_args[@]}"} || status=$?
  if [ "$status" = 2 ]; then
    echo "ci-regression.sh: ab could not run the base $ab_ref; a commit older than \`attnbench ab\` cannot serve passes: use the stored-baseline path (scripts/ci-regression.sh without --ab) for it" >&2
  fi
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/ab.md" ]; then
    cat "$out/ab.md" >> "$GITHUB_STEP_SUMMARY"
  fi
  exit "$status"
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
