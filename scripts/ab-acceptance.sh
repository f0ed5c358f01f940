#!/usr/bin/env bash
# The measured acceptance of `attnbench ab` (README "CI regression runs"): on configs/ci-ab.json,
# RUNS times each, interleaved so that every kind of run sees the same machine conditions:
#   self    ab, one binary against itself: any SLOWER is a false alarm
#   plant   ab, that binary against a build with a planted slowdown: every run must say SLOWER
#   same    the stored-baseline path: `run` with the binary, `compare` against one stored run of it
#   planted the same with the planted build
# then summary.md with every run's verdicts, ratios and interval half-widths, and summary.json
# ("table": one row per kind of run, the counts and ranges the README quotes), made by
# scripts/ab_acceptance_summary.py. Every timed command holds /tmp/attnbench-measure.lock, so
# measurements never overlap.
#
#   scripts/ab-acceptance.sh OUT_DIR [RUNS]      (RUNS: 30 of each kind unless given)
#
# Beside every count of runs (false SLOWER in N self runs and N stored-baseline runs of the same
# binary; plants caught in N planted runs) the summary prints the exact 95% Clopper–Pearson interval
# of the rate: for 0 of N the one-sided 95% upper bound 1 − 0.05^(1/N), for N of N the one-sided 95%
# lower bound 0.05^(1/N), otherwise the two-sided 95% interval (summary.json: rate_ci_low,
# rate_ci_high, rate_ci). A count bounds a rate no more tightly: 0 false alarms in 10 runs puts the
# false-alarm rate only at ≤ 25.9%, in 30 runs at ≤ 9.5%; hence 30 runs by default.
#
# Environment: ATTNBENCH_BIN (default build/attnbench), ATTNBENCH_PLANT_BIN (default
# build-plant/attnbench: cmake -DATTNBENCH_TEST_PLANTED_SLOWDOWN=10, README says how).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/ab-acceptance.sh OUT_DIR [RUNS]}
runs=${2:-30}
BIN=${ATTNBENCH_BIN:-build/attnbench}
PLANT=${ATTNBENCH_PLANT_BIN:-build-plant/attnbench}
CONFIG=configs/ci-ab.json
LOCK=/tmp/attnbench-measure.lock
mkdir -p "$out"
timed() { flock "$LOCK" "$@"; }

timed "$BIN" run "$CONFIG" --out "$out/compare/baseline" --force --quiet > /dev/null
for i in $(seq 1 "$runs"); do
  echo "ab-acceptance.sh: round $i of $runs" >&2
  timed "$BIN" ab --base "$BIN" --candidate "$BIN" "$CONFIG" --out "$out/self/$i" --force > /dev/null 2>&1 || true
  timed "$BIN" ab --base "$BIN" --candidate "$PLANT" "$CONFIG" --out "$out/plant/$i" --force > /dev/null 2>&1 || true
  for kind in same planted; do
    bin=$BIN; [ "$kind" = planted ] && bin=$PLANT
    timed "$bin" run "$CONFIG" --out "$out/compare/$kind-$i" --force --quiet > /dev/null || true
    for t in 15% 5%; do
      "$BIN" compare "$out/compare/baseline/results.json" "$out/compare/$kind-$i/results.json" --threshold "$t" \
        --out "$out/compare/$kind-$i/compare-${t%\%}" --force > /dev/null || true
    done
  done
done

python3 scripts/ab_acceptance_summary.py "$out" "$runs"
