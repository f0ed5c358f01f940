#!/usr/bin/env python3
"""The tables of scripts/peer-compare.sh from its rows: best against best within each precision class.

  peer_table.py ROWS.jsonl OUT CPU CPU_ID FEATURES VERSIONS THREADS ROUNDS BATCHES PASSES NATIVE_BF16

ROWS holds one JSON line per engine, shape and round (attnbench's variants and the peers, each with
its precision class, status and samples/s). Per shape and class: each engine's geometric mean over
the rounds; attnbench's fastest PASS variant and the fastest peer whose output check passed; their
ratio's geometric mean over the rounds with a paired 95% t interval (the per-round ratios' logs: the
rounds alternate engines, so a round's drift cancels in its ratio) and a verdict from the interval.
Writes OUT/peers.md and OUT/peers.json (every round's rows, and "table": one row per shape, the
README's figures). Standard library only.
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
    if low is None:
        return "n/a (one round: no interval)"
    return "ahead" if low > 1 else "behind" if high < 1 else "level"


def main():
    (rows_path, out, cpu, cpu_id, features, versions, threads, rounds, batches, passes,
     native_bf16) = sys.argv[1:]
    rows = [json.loads(line) for line in open(rows_path) if line.strip()]
    shapes = sorted({(r["batch"], r["length"]) for r in rows}, key=lambda s: (s[1], s[0]))
    table, md = [], []
    for b, l in shapes:
        at = [r for r in rows if (r["batch"], r["length"]) == (b, l)]
        engines = {}  # name → {"class", "ran", "rounds": {round: samples/s}, "ok": bool, "why": str, "rel_l2"}
        for r in at:
            e = engines.setdefault(r["engine"], {"class": r.get("class"), "ran": r.get("ran"), "rounds": {},
                                                 "ok": True, "why": "", "rel_l2": r.get("rel_l2"), "kept": None})
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
            row.update({"int8_over_fp32": ratio, "int8_over_fp32_ci_low": low, "int8_over_fp32_ci_high": high})
        row["engines"] = {n: {"class": e["class"], "ran": e["ran"], "counted": e["ok"], "why_not": e["why"],
                              "rel_l2": e["rel_l2"], "kept": e["kept"], "rounds": e["rounds"]}
                          for n, e in engines.items()}
        table.append(row)

    f = lambda x, d=3: "n/a" if x is None else f"{x:.{d}g}"
    md += ["# attnbench against transformers, ONNX Runtime and OpenVINO", "",
           f"CPU {cpu} ({cpu_id}), features: {features.strip() or 'none detected'}; {threads} threads; {versions}.",
           f"minilm-l6 dims (6 layers, hidden 384, 12 heads, ffn 1536), the same seeded weights and token ids for every "
           f"engine, fixed lengths (no padding); every engine's round: a warm-up pass, then {passes} timed passes of "
           f"{batches} forward calls; {rounds} alternating rounds. Figures: samples/s, geometric means over the rounds. "
           f"Ratios: attnbench's fastest PASS variant ÷ the fastest peer that passed its output check, within the class, "
           f"with a paired 95% t interval over the rounds.", ""]
    for klass in CLASSES:
        md += [f"## {CLASS_TITLE[klass]}", "",
               "| batch × length | attnbench best | variant | best peer | engine | ratio | 95% CI | verdict |",
               "|---|---:|---|---:|---|---:|---:|---|"]
        for row in table:
            p = klass + "_"
            if p + "ratio" not in row:
                md.append(f"| {row['batch']} × {row['length']} | n/a | | n/a | | n/a | | {row.get(p + 'na', 'n/a')} |")
                continue
            ci = "—" if row[p + "ci_low"] is None else f"{row[p + 'ci_low']:.2f}–{row[p + 'ci_high']:.2f}"
            md.append(f"| {row['batch']} × {row['length']} | {f(row[p + 'attnbench'])} | {row[p + 'attnbench_variant']} | "
                      f"{f(row[p + 'peer'])} | {row[p + 'peer_engine']} | {row[p + 'ratio']:.2f} | {ci} | "
                      f"{row[p + 'verdict']} |")
        md.append("")
        if klass == "int8":
            md += ["attnbench's fastest int8 variant ÷ its fastest fp32 variant (paired 95% t interval over the rounds):", ""]
            for row in table:
                if "int8_over_fp32" in row:
                    lo, hi = row["int8_over_fp32_ci_low"], row["int8_over_fp32_ci_high"]
                    ci = "—" if lo is None else f"{lo:.2f}–{hi:.2f}"
                    md.append(f"- {row['batch']} × {row['length']}: {row['int8_over_fp32']:.2f} ({ci})")
            md.append("")
    md += ["## Every engine", "",
           "Predictions kept: of the samples compared, those whose top-1 label is the fp32 baseline's.", "",
           "| batch × length | engine | class | ran | samples/s | rel. L2 vs attnbench fp32 | predictions kept | counted |",
           "|---|---|---|---|---:|---:|---:|---|"]
    for row in table:
        for n, e in row["engines"].items():
            rel = e["rel_l2"]
            kept = "n/a" if not e.get("kept") else f"{e['kept'][0]} of {e['kept'][1]}"
            md.append(f"| {row['batch']} × {row['length']} | {n} | {e['class']} | {e['ran']} | "
                      f"{f(row.get(n.replace('-', '_')))} | {'n/a' if rel is None else f'{rel:.2e}'} | {kept} | "
                      f"{'yes' if e['counted'] else 'no: ' + e['why_not']} |")
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "peers.md"), "w").write("\n".join(md) + "\n")
    json.dump({"cpu": cpu, "cpu_id": cpu_id, "cpu_features": features.split(), "threads": int(threads),
               "versions": versions, "passes": int(passes), "batches": int(batches), "rounds": rows, "table": table},
              open(os.path.join(out, "peers.json"), "w"), indent=1)
    print("\n".join(md))


if __name__ == "__main__":
    main()
