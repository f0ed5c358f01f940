#!/usr/bin/env python3
"""The GEMMs of one encoder layer, engine against engine: where a gap between attnbench and ONNX
Runtime (scripts/peer-compare.sh) comes from when both spend most of their time in matrix products.

For each linear of a BERT layer (QKV, attention output, FFN in with GELU, FFN out) at M = batch ×
length rows, one process times, in alternating rounds:
  aten    — torch.nn.functional.linear (+ torch.nn.functional.gelu): what attnbench's ATen linears run
  packed  — oneDNN on a weight pre-packed once (torch.ops.mkldnn._reorder_linear_weight and
            _linear_pointwise, bias and GELU fused): attnbench's "linear": "packed"
  onnxruntime — a MatMul + Add (+ com.microsoft Gelu) graph, all optimisations: ONNX Runtime's MLAS
and prints a markdown table of GFLOP/s (2·M·K·N per call; the GELU's few flops are not counted),
each the median over the rounds, with each engine's output checked against aten's first.
Runs in the peers' environment (onnxruntime, onnx), like scripts/peer_bench.py:
  $ATTNBENCH_PEERS_VENV/bin/python scripts/peer_gemm.py --batch 8 --length 128 --threads 2
"""
import argparse
import os
import statistics
import time

import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--length", type=int, default=128)
    p.add_argument("--hidden", type=int, default=384)
    p.add_argument("--ffn", type=int, default=1536)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=20, help="timed calls per engine per round")
    p.add_argument("--out", help="also write the table to this file (its folder is created)")
    return p.parse_args()


def seconds_per_call(fn, calls):
    fn()
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def ort_session(w, b, gelu, m, k, threads):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]),
             helper.make_node("Add", ["xw", "b"], ["xwb" if gelu else "y"])]
    if gelu:
        nodes.append(helper.make_node("Gelu", ["xwb"], ["y"], domain="com.microsoft"))
    graph = helper.make_graph(
        nodes, "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, w.shape[0]])],
        [numpy_helper.from_array(w.t().contiguous().numpy(), "w"), numpy_helper.from_array(b.numpy(), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def main():
    a = parse_args()
    lines = []

    def out(line):
        print(line, flush=True)
        lines.append(line)

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    m, h, f = a.batch * a.length, a.hidden, a.ffn
    layers = [("qkv", h, 3 * h, False), ("out_proj", h, h, False), ("ffn_in + GELU", h, f, True), ("ffn_out", f, h, False)]
    out(f"| linear | M × K × N | aten GFLOP/s | packed GFLOP/s | ONNX Runtime GFLOP/s | packed ÷ aten | packed ÷ ONNX Runtime |")
    out("|---|---|---:|---:|---:|---:|---:|")
    total = {"aten": 0.0, "packed": 0.0, "onnxruntime": 0.0}
    with torch.inference_mode():
        for name, k, n, gelu in layers:
            x, w, b = torch.randn(m, k), torch.randn(n, k) * 0.05, torch.randn(n)
            packed = torch.ops.mkldnn._reorder_linear_weight(w)
            sess = ort_session(w, b, gelu, m, k, a.threads)
            xn = x.numpy()
            engines = {
                "aten": lambda: F.gelu(F.linear(x, w, b)) if gelu else F.linear(x, w, b),
                "packed": lambda: torch.ops.mkldnn._linear_pointwise(x, packed, b, "gelu" if gelu else "none", [],
                                                                     "none" if gelu else None),
                "onnxruntime": lambda: torch.from_numpy(sess.run(None, {"x": xn})[0]),
            }
            ref = engines["aten"]()
            for e, fn in engines.items():
                err = ((fn() - ref).norm() / ref.norm()).item()
                assert err < 1e-4, f"{name}: {e} differs from aten by relative L2 {err:.2e}"
            times = {e: [] for e in engines}
            for _ in range(a.rounds):
                for e, fn in engines.items():
                    times[e].append(seconds_per_call(fn, a.calls))
            flops = 2.0 * m * k * n
            med = {e: statistics.median(t) for e, t in times.items()}
            for e in total:
                total[e] += med[e]
            g = {e: flops / med[e] / 1e9 for e in med}
            out(f"| {name} | {m} × {k} × {n} | {g['aten']:.1f} | {g['packed']:.1f} | {g['onnxruntime']:.1f} | "
                  f"{g['packed'] / g['aten']:.2f} | {g['packed'] / g['onnxruntime']:.2f} |")
    layer_flops = sum(2.0 * m * k * n for _, k, n, _ in layers)
    g = {e: layer_flops / t / 1e9 for e, t in total.items()}
    out(f"| the layer's four | {layer_flops / 1e9:.2f} GFLOP | {g['aten']:.1f} | {g['packed']:.1f} | "
          f"{g['onnxruntime']:.1f} | {g['packed'] / g['aten']:.2f} | {g['packed'] / g['onnxruntime']:.2f} |")
    out(f"\nMedian of {a.rounds} alternating rounds of {a.calls} calls each; {a.threads} threads; torch "
          f"{torch.__version__}, onnxruntime {ort.__version__}. Each engine's output matched aten's (relative L2 < 1e-4).")
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(f"# The GEMMs of one encoder layer at batch {a.batch} × length {a.length} (scripts/peer_gemm.py)\n\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
