#!/usr/bin/env python3
"""The summary of scripts/ab-acceptance.sh: OUT/summary.md and OUT/summary.json from its runs.

  ab_acceptance_summary.py OUT RUNS

Every count of runs is printed with its exact 95% Clopper–Pearson interval for the rate it
estimates (false SLOWER in the self runs and the stored-baseline runs of the same binary; plants
caught in the planted runs):
  0 of N      the one-sided 95% upper bound, 1 − 0.05^(1/N) (0 of 10: ≤ 25.9%; 0 of 30: ≤ 9.5%)
  N of N      the one-sided 95% lower bound, 0.05^(1/N) (10 of 10: ≥ 74.1%; 30 of 30: ≥ 90.5%)
  otherwise   the two-sided 95% interval [B(0.025; k, N−k+1), B(0.975; k+1, N−k)], B the beta
              quantile, found by bisection on the regularized incomplete beta function
No count of runs bounds a rate more tightly than that: 0 false alarms in 10 runs says only that the
false-alarm rate is at most about a quarter. Standard library only.
"""
import json
import math
import os
import statistics
import sys

CONFIDENCE = 0.95


def _betacf(a, b, x):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-15
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), a, b > 0, 0 ≤ x ≤ 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def beta_quantile(p, a, b):
    """x with I_x(a, b) = p, by bisection (I is increasing in x)."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if betainc(a, b, mid) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return (lo + hi) / 2


def clopper_pearson(k, n, confidence=CONFIDENCE):
    """(low, high, kind) for a rate seen k times in n: exact Clopper–Pearson at `confidence`.

    0 of n: the one-sided upper bound (low 0), kind "upper"; n of n: the one-sided lower bound
    (high 1), kind "lower"; otherwise the two-sided interval, each tail (1 − confidence) / 2, kind
    "two-sided"."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"clopper_pearson: {k} of {n}")
    alpha = 1.0 - confidence
    if k == 0:
        return 0.0, 1.0 - alpha ** (1.0 / n), "upper"
    if k == n:
        return alpha ** (1.0 / n), 1.0, "lower"
    return beta_quantile(alpha / 2, k, n - k + 1), beta_quantile(1 - alpha / 2, k + 1, n - k), "two-sided"


def kind_text(kind, confidence=CONFIDENCE):
    pct = f"{100 * confidence:g}%"
    return {"upper": f"one-sided {pct} Clopper–Pearson upper bound",
            "lower": f"one-sided {pct} Clopper–Pearson lower bound"}.get(kind, f"two-sided {pct} Clopper–Pearson interval")


def rate_text(k, n, what):
    """'0 of 30; false-alarm rate ≤ 9.5% (one-sided 95% Clopper–Pearson upper bound)'."""
    if n == 0:
        return f"0 of 0; no {what} rate (no runs)"
    low, high, kind = clopper_pearson(k, n)
    span = {"upper": f"≤ {100 * high:.1f}%", "lower": f"≥ {100 * low:.1f}%"}.get(
        kind, f"{100 * low:.1f}%–{100 * high:.1f}%")
    return f"{k} of {n}; {what} rate {span} ({kind_text(kind)})"


def rate_fields(k, n, what):
    if n == 0:
        return {}
    low, high, kind = clopper_pearson(k, n)
    return {"rate_of": what, "rate_ci_low": low, "rate_ci_high": high, "rate_ci": kind_text(kind)}


def summarize(out, runs):
    lines = ["# ab acceptance: summary", "",
             "Beside every count of runs: the exact 95% Clopper–Pearson interval of the rate it estimates "
             "(0 of N: the one-sided upper bound, 1 − 0.05^(1/N); N of N: the one-sided lower bound, 0.05^(1/N); "
             "otherwise two-sided).", ""]
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

    for kind, title, want, what in (("self", "the same binary against itself", "no SLOWER", "false-alarm"),
                                    ("plant", "against the build with a planted 10% slowdown", "SLOWER every time",
                                     "catch")):
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
                  f"Runs with a SLOWER verdict (ab exit 1): {rate_text(slower_runs, len(done), what)}", ""]
        vs = [v for r in done for v in r["variants"]]
        row = counted("ab " + kind, len(done), [v["verdict"] for v in vs],
                      [v["ratio"] for v in vs if v["ratio"] is not None],
                      [v["ratio_rel_half_width"] for v in vs if v["ratio_rel_half_width"] is not None],
                      [v["noisy"] for v in vs])
        row["runs_with_slower"] = slower_runs
        row.update(rate_fields(slower_runs, len(done), what))
    for kind, title, what in (("same", "the same binary, run against the stored baseline", "false-alarm"),
                              ("planted", "the planted build, run against the stored baseline", "catch")):
        lines += [f"## compare: {title}", "", "| run | variant | change | verdict at 15% | verdict at 5% |",
                  "|---:|---|---:|---|---|"]
        counts = {}
        got = {15: [], 5: []}
        slower_runs = {15: 0, 5: 0}
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
            for t, doc in ((15, a), (5, b)):
                slower_runs[t] += any(v["verdict"] == "SLOWER" for v in doc["variants"])
            for v15, v5 in zip(a["variants"], b["variants"]):
                got[15].append(v15["verdict"])
                got[5].append(v5["verdict"])
                if v15.get("geomean_change") is not None:
                    changes.append(v15["geomean_change"])
                key = (v15["verdict"], v5["verdict"])
                counts[key] = counts.get(key, 0) + 1
                ch = v15.get("geomean_change")
                lines.append(f"| {i} | {v15['name']} | {'n/a' if ch is None else f'{100 * ch:+.1f}%'} | "
                             f"{v15['verdict']} | {v5['verdict']} |")
        lines += ["", "Verdicts (15%, 5%): " + ", ".join(f"{k[0]}/{k[1]} {n}" for k, n in sorted(counts.items()))]
        for t in (15, 5):
            lines.append(f"Runs with a SLOWER verdict at {t}%: {rate_text(slower_runs[t], done, what)}")
        lines.append("")
        for t in (15, 5):
            row = counted(f"compare {kind} {t}%", done, got[t])
            if changes:
                row["change_min"], row["change_median"], row["change_max"] = min(changes), statistics.median(changes), max(changes)
            row["runs_with_slower"] = slower_runs[t]
            row.update(rate_fields(slower_runs[t], done, what))
    open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
    json.dump({"table": table}, open(os.path.join(out, "summary.json"), "w"), indent=1)
    return lines


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    print("\n".join(summarize(sys.argv[1], int(sys.argv[2]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
