#!/usr/bin/env python3
"""Each profiled region's arithmetic rate beside the measured matmul ceiling of its dtype.

  scripts/region-gflops.py PROFILE_DIR RUN_DIR [--out FILE]

PROFILE_DIR is what `attnbench profile CONFIG --out PROFILE_DIR` wrote (breakdown.csv, and the config
it ran in PROFILE_DIR/config.json or given by --config); RUN_DIR is what `attnbench run CONFIG --out
RUN_DIR` wrote for the same config in the same session: its results.json gives the model's dims, each
variant's batch shape and compute dtype, and the matmul ceilings measured in that run. The workload
must be fixed-length static batches without padding (every step one batch of the same shape), as in
configs/profile-bf16-cpu.json, so each region's FLOPs per layer are exact:

  attention.qkv_proj   2·T·H·3H        (T = batch × length tokens, H hidden)
  attention.out_proj   2·T·H·H
  ffn                  2·T·H·F·2       (F the FFN width: two GEMMs)
  attention core       4·B·S²·H        (Q·Kᵀ and P·V over every head: sdpa, custom, or scores + context)
  layernorm, softmax, mask, dropout    no matrix FLOPs: their rate is n/a

Writes a markdown table (stdout, or --out): region, ms per layer, GFLOP per layer, GFLOP/s, and the
share of the run's measured ceiling of the variant's compute dtype. Standard library only.
"""
import argparse
import csv
import json
import sys
from pathlib import Path

CORE = {"attention.sdpa", "attention.custom", "attention.scores", "attention.context"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("profile_dir")
    p.add_argument("run_dir")
    p.add_argument("--out")
    return p.parse_args()


def region_flops(region, b, s, hidden, ffn):
    t = b * s
    if region == "attention.qkv_proj":
        return 2 * t * hidden * 3 * hidden
    if region == "attention.out_proj":
        return 2 * t * hidden * hidden
    if region == "ffn":
        return 2 * t * hidden * ffn * 2
    if region in ("attention.sdpa", "attention.custom"):
        return 4 * b * s * s * hidden
    if region in ("attention.scores", "attention.context"):
        return 2 * b * s * s * hidden
    return None


def main():
    a = parse_args()
    run = json.loads((Path(a.run_dir) / "results.json").read_text())
    model = run["model"]
    hidden, ffn = model["hidden"], model["ffn"]
    ceilings = {c["dtype"]: c["gflops"] for c in run["environment"].get("ceilings", [])}
    cfg = run["environment"]["config"]
    lengths = cfg["workload"]["lengths"]
    if lengths.get("kind") != "fixed":
        sys.exit("region-gflops: the workload must have fixed lengths (every batch one shape)")
    seq = lengths["length"]
    variants = {v["name"]: v for v in run["variants"]}
    shapes = {}
    for v in cfg["variants"]:
        bat = v.get("batching", {})
        if bat.get("kind", "static") != "static":
            sys.exit(f"region-gflops: variant {v['name']} does not run static batches")
        shapes[v["name"]] = bat.get("batch_size", cfg.get("batching", {}).get("batch_size"))
    rows = list(csv.DictReader(open(Path(a.profile_dir) / "breakdown.csv")))
    lines = [f"CPU {run['environment'].get('cpu_model')} ({run['environment'].get('cpu_id')}), "
             f"{run['environment'].get('threads')} threads; model {model.get('preset') or 'from weights'} "
             f"(hidden {hidden}, FFN {ffn}); length {seq}. Ceilings measured in `{a.run_dir}`: "
             + ", ".join(f"{d} {g:.1f} GFLOP/s" for d, g in ceilings.items()) + ".", "",
             "| variant | batch × length | compute dtype | region | ms/layer | GFLOP/layer | GFLOP/s | % of its ceiling |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        name, region = r["variant"], r["region"]
        if r["seq"] != "all" or name not in variants or region == "encoder.layer":
            continue
        b = shapes.get(name)
        dtype = variants[name].get("compute_dtype", "fp32")
        ms = float(r["ms_per_layer"])
        flops = region_flops(region, b, seq, hidden, ffn) if b else None
        if flops is None or ms <= 0:
            lines.append(f"| {name} | {b} × {seq} | {dtype} | {region} | {ms:.3f} | n/a | n/a | n/a |")
            continue
        rate = flops / (ms * 1e-3) / 1e9
        ceiling = ceilings.get(dtype)
        share = f"{100 * rate / ceiling:.0f}%" if ceiling else "n/a (no ceiling of this dtype in the run)"
        lines.append(f"| {name} | {b} × {seq} | {dtype} | {region} | {ms:.3f} | {flops / 1e9:.3f} | {rate:.1f} | {share} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
