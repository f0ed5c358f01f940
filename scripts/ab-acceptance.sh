#!/usr/bin/env bash
# The measured acceptance of `attnbench ab` (README "CI regression runs"): on configs/ci-ab.json,
# RUNS times each, interleaved so that every kind of run sees the same machine conditions:
#   self    ab, one binary against itself: any SLOWER is a false alarm
#   plant   ab, that binary against a build with a planted slowdown: every run must say SLOWER
#   same    the stored-baseline path: `run` with the binary, `compare` against one stored run of it
#   planted the same with the planted build
# then summary.md with every run's verdicts, ratios and interval half-widths, and summary.json
# ("table": one row per kind of run, the counts and ranges the README quotes). Every timed command
# holds /tmp/attnbench-measure.lock, so measurements never overlap.
#
#   scripts/ab-acceptance.sh OUT_DIR [RUNS]
#
# Environment: ATTNBENCH_BIN (default build/attnbench), ATTNBENCH_PLANT_BIN (default
# build-plant/attnbench: cmake -DATTNBENCH_TEST_PLANTED_SLOWDOWN=10, README says how).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/ab-acceptance.sh OUT_DIR [RUNS]}
runs=${2:-10}
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

python3 - "$out" "$runs" << 'PY'
import json, os, sys
out, runs = sys.argv[1], int(sys.argv[2])
import statistics
lines = ["# ab acceptance: summary", ""]
table = []
def counted(name, runs_done, verdicts, ratios=(), widths=(), noisy=()):
    row = {"name": name, "runs": runs_done, "variant_runs": len(verdicts)}
    for v in ("SLOWER", "SAME", "FASTER", "FAIL"):
        row[v.lower()] = sum(1 for x in verdicts if x == v)
    row["noisy"] = sum(1 for x in noisy if x)  # verdicts whose interval missed the run's target
    for key, xs in (("ratio", ratios), ("half_width", widths), ("change", ())):
        if xs:
            row[key + "_min"], row[key + "_median"], row[key + "_max"] = min(xs), statistics.median(xs), max(xs)
    table.append(row)
    return row
def ab_rows(kind):
    rows = []
    for i in range(1, runs + 1):
        f = os.path.join(out, kind, str(i), "ab.json")
        rows.append(json.load(open(f)) if os.path.exists(f) else None)
    return rows
for kind, title, want in (("self", "the same binary against itself", "no SLOWER"),
                          ("plant", "against the build with a planted 10% slowdown", "SLOWER every time")):
    lines += [f"## ab: {title} ({want})", "", "| run | variant | verdict | ratio [95% CI] | ± half-width | rounds | stop |",
              "|---:|---|---|---|---:|---:|---|"]
    counts = {}
    for i, r in enumerate(ab_rows(kind), 1):
        if r is None:
            lines.append(f"| {i} | — | no ab.json | | | | |")
            counts["missing"] = counts.get("missing", 0) + 1
            continue
        for v in r["variants"]:
            counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
            lines.append(f"| {i} | {v['variant']} | {v['verdict']}{' (noisy)' if v['noisy'] else ''} | "
                         f"{v['ratio']:.4f} [{v['ratio_ci_low']:.4f}–{v['ratio_ci_high']:.4f}] | "
                         f"{100 * v['ratio_rel_half_width']:.2f}% | {v['rounds']} | {v['stop_reason']} |")
    done = [r for r in ab_rows(kind) if r is not None]
    # A run says SLOWER (exits 1) when any of its variants does: what a CI gate sees.
    slower_runs = sum(1 for r in done if any(v["verdict"] == "SLOWER" for v in r["variants"]))
    lines += ["", "Verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())),
              f"Runs with a SLOWER verdict (ab exit 1): {slower_runs} of {len(done)}", ""]
    vs = [v for r in done for v in r["variants"]]
    row = counted("ab " + kind, len(done), [v["verdict"] for v in vs], [v["ratio"] for v in vs if v["ratio"] is not None],
                  [v["ratio_rel_half_width"] for v in vs if v["ratio_rel_half_width"] is not None],
                  [v["noisy"] for v in vs])
    row["runs_with_slower"] = slower_runs
for kind, title in (("same", "the same binary, run against the stored baseline"),
                    ("planted", "the planted build, run against the stored baseline")):
    lines += [f"## compare: {title}", "", "| run | variant | change | verdict at 15% | verdict at 5% |", "|---:|---|---:|---|---|"]
    counts = {}
    got = {15: [], 5: []}
    changes = []
    done = 0
    for i in range(1, runs + 1):
        c15 = os.path.join(out, "compare", f"{kind}-{i}", "compare-15", "compare.json")
        c5 = os.path.join(out, "compare", f"{kind}-{i}", "compare-5", "compare.json")
        if not (os.path.exists(c15) and os.path.exists(c5)):
            lines.append(f"| {i} | — | no compare.json | | |")
            continue
        a, b = json.load(open(c15)), json.load(open(c5))
        done += 1
        for v15, v5 in zip(a["variants"], b["variants"]):
            got[15].append(v15["verdict"])
            got[5].append(v5["verdict"])
            if v15.get("geomean_change") is not None:
                changes.append(v15["geomean_change"])
            key = (v15["verdict"], v5["verdict"])
            counts[key] = counts.get(key, 0) + 1
            ch = v15.get("geomean_change")
            lines.append(f"| {i} | {v15['name']} | {'n/a' if ch is None else f'{100 * ch:+.1f}%'} | {v15['verdict']} | {v5['verdict']} |")
    lines += ["", "Verdicts (15%, 5%): " + ", ".join(f"{k[0]}/{k[1]} {n}" for k, n in sorted(counts.items())), ""]
    for t in (15, 5):
        row = counted(f"compare {kind} {t}%", done, got[t])
        if changes:
            row["change_min"], row["change_median"], row["change_max"] = min(changes), statistics.median(changes), max(changes)
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
json.dump({"table": table}, open(os.path.join(out, "summary.json"), "w"), indent=1)
print("\n".join(lines))
PY
