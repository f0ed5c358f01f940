#!/usr/bin/env python3
"""What a user would run instead of attnbench's model: Hugging Face transformers (eager and SDPA
attention) and ONNX Runtime, on the same BERT shape, batch, length and threads.

One invocation measures one round of every peer at one shape and prints one JSON line per peer:
{"engine", "batch", "length", "samples_per_s", "passes", "seconds"}. scripts/peer-compare.sh calls
it alternately with attnbench, so slow drift of a shared machine falls on all engines alike.

The model: BertForSequenceClassification with the dims of attnbench's preset (minilm-l6 by default:
6 layers, hidden 384, 12 heads, ffn 1536, vocab 30522, 2 labels), random weights (seeded), fp32,
inference mode; inputs of fixed length with an all-ones attention mask (no padding). A pass is
`batches` forward calls over pre-built input tensors, as attnbench's pass is over its batches.
Runs in the peers' own virtual environment (transformers, onnxruntime, onnx), never the project's.
"""
import argparse
import json
import os
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--length", type=int, required=True)
    p.add_argument("--batches", type=int, default=4, help="forward calls per pass")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-time", type=float, default=3.0, help="seconds of timed passes per engine")
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--hidden", type=int, default=384)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=1536)
    p.add_argument("--vocab", type=int, default=30522)
    p.add_argument("--engines", default="transformers-eager,transformers-sdpa,onnxruntime")
    p.add_argument("--onnx-cache", default=None, help="directory for exported models (reused across rounds)")
    return p.parse_args()


def timed(run_pass, samples_per_pass, min_time):
    """Warm-up pass, then whole passes until min_time has passed; samples/s over them."""
    run_pass()
    passes, start = 0, time.perf_counter()
    while True:
        run_pass()
        passes += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time and passes >= 2:
            return passes * samples_per_pass / elapsed, passes, elapsed


def main():
    a = parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
                     num_attention_heads=a.heads, intermediate_size=a.ffn, max_position_embeddings=512,
                     num_labels=2, hidden_act="gelu")
    gen = torch.Generator().manual_seed(1)
    inputs = [(torch.randint(0, a.vocab, (a.batch, a.length), generator=gen),
               torch.ones(a.batch, a.length, dtype=torch.long)) for _ in range(a.batches)]
    samples_per_pass = a.batch * a.batches
    engines = [e for e in a.engines.split(",") if e]
    out = []

    for engine in engines:
        if engine.startswith("transformers-"):
            impl = engine.split("-", 1)[1]
            torch.manual_seed(0)  # the same seeded weights for every engine
            model = BertForSequenceClassification._from_config(cfg, attn_implementation=impl).eval()

            def run_pass(model=model):
                with torch.inference_mode():
                    for ids, mask in inputs:
                        model(input_ids=ids, attention_mask=mask)

            rate, passes, seconds = timed(run_pass, samples_per_pass, a.min_time)
        elif engine == "onnxruntime":
            import onnxruntime as ort
            cache = a.onnx_cache or tempfile.mkdtemp(prefix="attnbench-peers-")
            os.makedirs(cache, exist_ok=True)
            path = os.path.join(cache, f"bert-{a.layers}x{a.hidden}-{a.heads}h.onnx")
            if not os.path.exists(path):
                torch.manual_seed(0)
                model = BertForSequenceClassification._from_config(cfg, attn_implementation="eager").eval()
                ids, mask = inputs[0]
                tmp = path + ".tmp"
                torch.onnx.export(model, (ids, mask), tmp, input_names=["input_ids", "attention_mask"],
                                  output_names=["logits"], opset_version=17, dynamo=False,
                                  dynamic_axes={"input_ids": {0: "batch", 1: "length"},
                                                "attention_mask": {0: "batch", 1: "length"},
                                                "logits": {0: "batch"}})
                os.replace(tmp, path)
            so = ort.SessionOptions()
            so.intra_op_num_threads = a.threads
            so.inter_op_num_threads = 1
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            feeds = [{"input_ids": ids.numpy(), "attention_mask": mask.numpy()} for ids, mask in inputs]

            def run_pass(session=session, feeds=feeds):
                for f in feeds:
                    session.run(None, f)

            rate, passes, seconds = timed(run_pass, samples_per_pass, a.min_time)
        else:
            print(f"peer_bench: unknown engine {engine!r}", file=sys.stderr)
            return 2
        out.append({"engine": engine, "batch": a.batch, "length": a.length, "samples_per_s": rate,
                    "passes": passes, "seconds": seconds})
        print(json.dumps(out[-1]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
