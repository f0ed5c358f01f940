#!/usr/bin/env python3
"""The tables of scripts/peer-compare.sh from its rows: best against best within each precision class.

  peer_table.py ROWS.jsonl OUT CPU CPU_ID FEATURES VERSIONS THREADS ROUNDS BATCHES PASSES NATIVE_BF16

ROWS holds one JSON line per engine, shape and round (attnbench's variants and the peers, each with
its precision class, status and samples/s). Per shape and class: each engine's geometric mean over
the rounds; attnbench's fastest PASS variant and the fastest peer whose output check passed; their
ratio's geometric mean over the rounds with a paired 95% t interval (the per-round ratios' logs: the
rounds alternate engines, so a round's drift cancels in its ratio) and a verdict from the interval.

Every claim is read from the paired interval, never from the point estimate: ahead (its low end > 1),
behind (its high end < 1), level (it holds 1); with one round there is no interval and no verdict.
Every ratio printed, in the tables and in the summary, has its interval beside it.

Each row may carry "position" (1 or 2: whether its side ran first or second in its round and shape;
peer-compare.sh alternates them, attnbench first in odd rounds); peers.json records the order of every
round ("round_order") and how many engines' series were fastest in their first round (a drift of the
machine across the rounds, "first_round_fastest").

Writes OUT/peers.md and OUT/peers.json (every round's rows, "table": one row per shape, the README's
figures, and "summary": the lines of the summary). Standard library only.
"""
import json
import math
import os
import sys

CLASSES = ["fp32", "bf16", "int8"]
CLASS_TITLE = {"fp32": "fp32", "bf16": "bf16/fp16", "int8": "int8"}
# Two-sided 95% quantiles of Student's t by degrees of freedom (1…30); beyond 30, 1.96 is close.
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
       2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
       2.045, 2.042]


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def paired_interval(a_rounds, b_rounds):
    """Geometric mean of a/b over the rounds both have, with its 95% t interval (None without two)."""
    common = sorted(set(a_rounds) & set(b_rounds))
    logs = [math.log(a_rounds[r] / b_rounds[r]) for r in common]
    if not logs:
        return None, None, None, 0
    mean = sum(logs) / len(logs)
    if len(logs) < 2:
        return math.exp(mean), None, None, len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    half = (T95[len(logs) - 2] if len(logs) - 1 <= len(T95) else 1.96) * sd / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half), len(logs)


def verdict(low, high):
    """From the paired interval alone: ahead (low end > 1), behind (high end < 1), level (it holds 1)."""
    if low is None or high is None:
        return "n/a (one round: no interval)"
    return "ahead" if low > 1 else "behind" if high < 1 else "level"


def with_interval(ratio, low, high):
    """A ratio as printed everywhere: never without its interval."""
    if ratio is None:
        return "n/a"
    ci = "one round: no interval" if low is None else f"95% CI {low:.2f}–{high:.2f}"
    return f"{ratio:.2f} ({ci})"


def side(engine):
    return "attnbench" if engine.startswith("attnbench-") else "peers"


def round_order(rows):
    """{round: [first side, second side]} from the rows' positions, "mixed" where shapes disagree."""
    seen = {}  # round → {(batch, length): {position: side}}
    for r in rows:
        if "position" in r:
            seen.setdefault(r["round"], {}).setdefault((r["batch"], r["length"]), {})[r["position"]] = side(r["engine"])
    order = {}
    for rnd in sorted(seen):
        forms = {tuple(pos[k] for k in sorted(pos)) for pos in seen[rnd].values()}
        order[str(rnd)] = list(forms.pop()) if len(forms) == 1 else "mixed"
    return order


def first_round_fastest(engines_by_shape):
    """How many series (engine × shape, two rounds or more) were fastest in their first round."""
    series = fastest_first = 0
    for engines in engines_by_shape:
        for e in engines.values():
            rounds = e["rounds"]
            if len(rounds) < 2:
                continue
            series += 1
            fastest_first += max(rounds, key=lambda k: rounds[k]) == min(rounds)
    return {"series": series, "fastest_in_first_round": fastest_first}


def order_text(order):
    if not order:
        return "the order within them not recorded"
    return "the order within them: " + "; ".join(
        f"round {r} " + (" then ".join(o) if isinstance(o, list) else o) for r, o in order.items())


def main():
    (rows_path, out, cpu, cpu_id, features, versions, threads, rounds, batches, passes,
     native_bf16) = sys.argv[1:]
    rows = [json.loads(line) for line in open(rows_path) if line.strip()]
    shapes = sorted({(r["batch"], r["length"]) for r in rows}, key=lambda s: (s[1], s[0]))
    table, md, engines_by_shape = [], [], []
    for b, l in shapes:
        at = [r for r in rows if (r["batch"], r["length"]) == (b, l)]
        engines = {}  # name → {"class", "ran", "rounds": {round: samples/s}, "ok": bool, "why": str, "rel_l2"}
        for r in at:
            e = engines.setdefault(r["engine"], {"class": r.get("class"), "ran": r.get("ran"), "rounds": {},
                                                 "ok": True, "why": "", "rel_l2": r.get("rel_l2"), "kept": None,
                                                 "detail": r.get("detail", "")})
            if r.get("status") not in ("PASS",) or "samples_per_s" not in r:
                e["ok"] = False
                e["why"] = e["why"] or f"{r.get('status')}: {r.get('reason', '')}".strip(": ")
            else:
                e["rounds"][r["round"]] = r["samples_per_s"]
            if r.get("rel_l2") is not None:
                e["rel_l2"] = r["rel_l2"]
            if r.get("kept") is not None:  # the same inputs every round: the last round's count
                e["kept"] = [r["kept"], r["compared"]]
            e["class"] = e["class"] or r.get("class")
        row = {"batch": b, "length": l}
        for name, e in engines.items():
            key = name.replace("-", "_")
            row[key] = geomean(list(e["rounds"].values())) if e["ok"] and e["rounds"] else None
        for klass in CLASSES:
            mine = {n: e for n, e in engines.items() if n.startswith("attnbench-") and e["class"] == klass and e["ok"]}
            peers = {n: e for n, e in engines.items() if not n.startswith("attnbench-") and e["class"] == klass and e["ok"]}
            pre = klass + "_"
            if klass == "bf16" and native_bf16 != "1":
                row[pre + "na"] = ("this CPU has no native bf16 (no avx512_bf16 or amx_bf16): \"amp\" resolves to "
                                   "fp32 and attnbench's bf16 cast would run on LibTorch's reference GEMM")
            if not mine or not peers:
                row.setdefault(pre + "na", "no attnbench variant of this class passed" if not mine else
                               "no peer of this class passed its output check")
                continue
            best_mine = max(mine, key=lambda n: geomean(list(mine[n]["rounds"].values())))
            best_peer = max(peers, key=lambda n: geomean(list(peers[n]["rounds"].values())))
            ratio, low, high, n = paired_interval(mine[best_mine]["rounds"], peers[best_peer]["rounds"])
            row.update({pre + "attnbench": geomean(list(mine[best_mine]["rounds"].values())),
                        pre + "attnbench_variant": best_mine[len("attnbench-"):],
                        pre + "peer": geomean(list(peers[best_peer]["rounds"].values())),
                        pre + "peer_engine": best_peer, pre + "ratio": ratio, pre + "ci_low": low,
                        pre + "ci_high": high, pre + "rounds": n, pre + "verdict": verdict(low, high)})
        # The second int8 target: attnbench's fastest int8 variant against its fastest fp32 one.
        if row.get("int8_attnbench") and row.get("fp32_attnbench"):
            int8_rounds = engines["attnbench-" + row["int8_attnbench_variant"]]["rounds"]
            fp32_rounds = engines["attnbench-" + row["fp32_attnbench_variant"]]["rounds"]
            ratio, low, high, _ = paired_interval(int8_rounds, fp32_rounds)
            row.update({"int8_over_fp32": ratio, "int8_over_fp32_ci_low": low, "int8_over_fp32_ci_high": high,
                        "int8_over_fp32_verdict": verdict(low, high)})
        row["engines"] = {n: {"class": e["class"], "ran": e["ran"], "counted": e["ok"], "why_not": e["why"],
                              "rel_l2": e["rel_l2"], "kept": e["kept"], "rounds": e["rounds"], "detail": e["detail"]}
                          for n, e in engines.items()}
        table.append(row)
        engines_by_shape.append(engines)

    # The summary: every line read from a verdict, that is from a paired interval, with the interval.
    summary = []
    for klass in CLASSES:
        p = klass + "_"
        rated = [row for row in table if p + "ratio" in row]
        if not rated:
            continue
        counts = {}
        for row in rated:
            counts[row[p + "verdict"]] = counts.get(row[p + "verdict"], 0) + 1
        tally = ", ".join(f"{v} at {n} of {len(rated)} shapes" for v, n in sorted(counts.items()))
        summary.append(f"{CLASS_TITLE[klass]}: attnbench's best against the best peer, by the paired 95% intervals: {tally}.")
        for row in rated:
            summary.append(f"  {row['batch']} × {row['length']}: {row[p + 'verdict']}, "
                           f"{with_interval(row[p + 'ratio'], row[p + 'ci_low'], row[p + 'ci_high'])}, "
                           f"{row[p + 'attnbench_variant']} against {row[p + 'peer_engine']}")
    for row in table:
        if "int8_over_fp32" in row:
            v = row["int8_over_fp32_verdict"]
            word = {"ahead": "faster than", "behind": "slower than", "level": "level with"}.get(v, v + ":")
            summary.append(f"int8 over fp32 (attnbench) at {row['batch']} × {row['length']}: {word} its fastest fp32 "
                           f"variant, {with_interval(row['int8_over_fp32'], row['int8_over_fp32_ci_low'], row['int8_over_fp32_ci_high'])}")
    order = round_order(rows)
    drift = first_round_fastest(engines_by_shape)

    f = lambda x, d=3: "n/a" if x is None else f"{x:.{d}g}"
    md += ["# attnbench against transformers, ONNX Runtime and OpenVINO", "",
           f"CPU {cpu} ({cpu_id}), features: {features.strip() or 'none detected'}; {threads} threads; {versions}.",
           f"minilm-l6 dims (6 layers, hidden 384, 12 heads, ffn 1536), the same seeded weights and token ids for every "
           f"engine, fixed lengths (no padding); every engine's round: a warm-up pass, then {passes} timed passes of "
           f"{batches} forward calls; {rounds} rounds, {order_text(order)}. "
           f"Figures: samples/s, each engine's geometric mean over the rounds. "
           f"Ratios: attnbench's fastest PASS variant ÷ the fastest peer that passed its output check, within the class, "
           f"with a paired 95% t interval over the rounds; a verdict is read from the interval only: ahead (low end > 1), "
           f"behind (high end < 1), level (it holds 1).", "",
           f"Series fastest in their first round: {drift['fastest_in_first_round']} of {drift['series']} "
           f"(engine × shape, over the rounds).", "",
           "## Summary", "", *[("- " + x if not x.startswith("  ") else "  - " + x.strip()) for x in summary], ""]
    for klass in CLASSES:
        md += [f"## {CLASS_TITLE[klass]}", "",
               "| batch × length | attnbench best | variant | best peer | engine | ratio | 95% CI | verdict |",
               "|---|---:|---|---:|---|---:|---:|---|"]
        for row in table:
            p = klass + "_"
            if p + "ratio" not in row:
                md.append(f"| {row['batch']} × {row['length']} | n/a | | n/a | | n/a | | {row.get(p + 'na', 'n/a')} |")
                continue
            ci = "no interval" if row[p + "ci_low"] is None else f"{row[p + 'ci_low']:.2f}–{row[p + 'ci_high']:.2f}"
            md.append(f"| {row['batch']} × {row['length']} | {f(row[p + 'attnbench'])} | {row[p + 'attnbench_variant']} | "
                      f"{f(row[p + 'peer'])} | {row[p + 'peer_engine']} | {row[p + 'ratio']:.2f} | {ci} | "
                      f"{row[p + 'verdict']} |")
        md.append("")
        if klass == "int8":
            md += ["attnbench's fastest int8 variant ÷ its fastest fp32 variant (paired 95% t interval over the rounds):", ""]
            for row in table:
                if "int8_over_fp32" in row:
                    lo, hi = row["int8_over_fp32_ci_low"], row["int8_over_fp32_ci_high"]
                    md.append(f"- {row['batch']} × {row['length']}: "
                              f"{with_interval(row['int8_over_fp32'], lo, hi)}, {row['int8_over_fp32_verdict']}")
            md.append("")
    md += ["## Every engine", "",
           "Predictions kept: of the samples compared, those whose top-1 label is the fp32 baseline's.", "",
           "| batch × length | engine | class | ran | form | samples/s | rel. L2 vs attnbench fp32 | predictions kept | counted |",
           "|---|---|---|---|---|---:|---:|---:|---|"]
    for row in table:
        for n, e in row["engines"].items():
            rel = e["rel_l2"]
            kept = "n/a" if not e.get("kept") else f"{e['kept'][0]} of {e['kept'][1]}"
            md.append(f"| {row['batch']} × {row['length']} | {n} | {e['class']} | {e['ran']} | {e.get('detail') or ''} | "
                      f"{f(row.get(n.replace('-', '_')))} | {'n/a' if rel is None else f'{rel:.2e}'} | {kept} | "
                      f"{'yes' if e['counted'] else 'no: ' + e['why_not']} |")
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "peers.md"), "w").write("\n".join(md) + "\n")
    json.dump({"cpu": cpu, "cpu_id": cpu_id, "cpu_features": features.split(), "threads": int(threads),
               "versions": versions, "passes": int(passes), "batches": int(batches),
               "order": ("alternating within each round and shape: odd rounds attnbench first, then the peers; "
                         "even rounds the peers first, then attnbench") if order else "not recorded",
               "round_order": order, "first_round_fastest": drift, "rounds": rows, "table": table,
               "summary": summary},
              open(os.path.join(out, "peers.json"), "w"), indent=1)
    print("\n".join(md))


if __name__ == "__main__":
    main()
