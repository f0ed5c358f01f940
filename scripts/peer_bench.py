#!/usr/bin/env python3
"""What a user would run instead of attnbench's model: Hugging Face transformers, ONNX Runtime and
OpenVINO, on the same weights, inputs, batch, length and threads, timed by attnbench's protocol.

Two subcommands; scripts/peer-compare.sh calls them and alternates the peers with attnbench:

  prepare --dir DIR --batch B --length L --batches N   (once per shape)
      Writes DIR/model/ (a seeded BertForSequenceClassification with the dims of attnbench's preset,
      minilm-l6 by default: config.json + model.safetensors, which attnbench loads as "model.weights"),
      DIR/inputs.jsonl (N·B samples of L token ids, attnbench's "workload.file"), DIR/model.onnx (the
      fp32 export ONNX Runtime and OpenVINO read), DIR/model-int8.onnx (ONNX Runtime's
      quantize_dynamic of it, int8 weights, activations quantized per call), DIR/model-bert-opt.onnx
      (the export through ONNX Runtime's BERT graph optimiser, onnxruntime.transformers.optimizer.
      optimize_model(model_type="bert", num_heads, hidden_size): fused attention, skip layer norms,
      embedding layer norm, GELU; what it fused goes to DIR/model-bert-opt.json) and
      DIR/model-int8-bert-opt.onnx (quantize_dynamic of the optimised graph, ONNX Runtime's
      documented int8 recipe). An optimised form that cannot be made is recorded in its .json, and its
      engines report n/a with the reason; the plain ones still run.

  run --dir DIR --batch B --length L --batches N --reference REF.npy [--warmup 1 --passes 3]
      One round of every engine (in --engines order, or its reverse with --reverse; each row
      records its place in it, "engine_place"): per engine a warm-up pass, then `passes` timed passes, each pass the
      N forward calls over pre-built inputs, timed by time.perf_counter (CLOCK_MONOTONIC, the clock
      attnbench's steady_clock reads): the protocol attnbench's run uses (warm-up excluded, the same
      batches and calls per pass). Prints one JSON line per engine: engine, precision class, the
      precision it ran, samples/s per timed pass, and the relative L2 of its logits against REF
      (attnbench's fp32 baseline on the same inputs), with a verdict: a peer whose logits are further
      from the reference than its class's bound computes something else and is flagged, not counted.

The engines and their precision classes:
  transformers-eager, transformers-sdpa           fp32
  transformers-sdpa-bf16                          bf16   (the model cast with .to(torch.bfloat16))
  onnxruntime                                     fp32   (ORT_ENABLE_ALL)
  onnxruntime-bert-opt                            fp32   (the BERT-optimised graph, ORT_ENABLE_ALL)
  onnxruntime-int8                                int8   (quantize_dynamic, QInt8 weights)
  onnxruntime-int8-bert-opt                       int8   (quantize_dynamic of the optimised graph)
  openvino-f32                                    fp32   (INFERENCE_PRECISION_HINT=f32)
  openvino-f32-static                             fp32   (the same, reshaped to the static batch ×
                                                          length before compiling)
  openvino-default, openvino-default-static       what it ran: OpenVINO's default precision hint on
                                                  this CPU (bf16 where it has native bf16), recorded
Every form is an engine of its own, so the best peer is whichever is faster at the shape, and every
one's logits are checked against the reference like the others'.
Runs in the peers' own virtual environment, never the project's.
"""
import argparse
import json
import math
import os
import sys
import time

# Relative-L2 bound of a peer's logits against attnbench's fp32 reference, per class: attnbench's
# own tolerances (README "Output check") for fp32 and the bf16 cast (whole model in bf16); for int8
# looser than attnbench's own (5e-2, "precision": "int8"), since ONNX Runtime's quantize_dynamic
# quantizes each weight per tensor, not per channel: 8-bit weights and activations through six
# layers move logits by a few percent, a wrong model by O(1).
CLASS_BOUND = {"fp32": 1e-4, "bf16": 1e-1, "fp16": 2e-2, "int8": 2.5e-1}
ENGINES = ["transformers-eager", "transformers-sdpa", "transformers-sdpa-bf16", "onnxruntime", "onnxruntime-bert-opt",
           "onnxruntime-int8", "onnxruntime-int8-bert-opt", "openvino-f32", "openvino-f32-static",
           "openvino-default", "openvino-default-static"]


def common(p):
    p.add_argument("--dir", required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--length", type=int, required=True)
    p.add_argument("--batches", type=int, default=4, help="forward calls per pass")


def parse_args():
    top = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = top.add_subparsers(dest="cmd", required=True)
    prep = sub.add_parser("prepare")
    common(prep)
    prep.add_argument("--layers", type=int, default=6)
    prep.add_argument("--hidden", type=int, default=384)
    prep.add_argument("--heads", type=int, default=12)
    prep.add_argument("--ffn", type=int, default=1536)
    prep.add_argument("--vocab", type=int, default=30522)
    prep.add_argument("--seed", type=int, default=0)
    run = sub.add_parser("run")
    common(run)
    run.add_argument("--threads", type=int, default=2)
    run.add_argument("--warmup", type=int, default=1)
    run.add_argument("--passes", type=int, default=3)
    run.add_argument("--reference", required=True, help="attnbench's fp32 logits on DIR/inputs.jsonl (.npy)")
    run.add_argument("--engines", default=",".join(ENGINES))
    run.add_argument("--reverse", action="store_true",
                     help="run the engines in the reverse order (peer-compare.sh: in even rounds, so that the "
                          "drift within the peers' turn does not always fall on the same engines)")
    return top.parse_args()


def load_inputs(a):
    import numpy as np
    rows = [json.loads(line) for line in open(os.path.join(a.dir, "inputs.jsonl")) if line.strip()]
    ids = np.asarray(rows, dtype=np.int64)
    assert ids.shape == (a.batch * a.batches, a.length), f"inputs.jsonl holds {ids.shape}"
    return [ids[i * a.batch:(i + 1) * a.batch] for i in range(a.batches)]


def prepare(a):
    import numpy as np
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    os.makedirs(a.dir, exist_ok=True)
    cfg = BertConfig(vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
                     num_attention_heads=a.heads, intermediate_size=a.ffn, max_position_embeddings=512,
                     num_labels=2, hidden_act="gelu")
    torch.manual_seed(a.seed)
    model = BertForSequenceClassification._from_config(cfg, attn_implementation="eager").eval()
    model.save_pretrained(os.path.join(a.dir, "model"), safe_serialization=True)
    # [CLS] random tokens [SEP], as attnbench generates them; the same for every engine.
    gen = np.random.default_rng(a.seed + 1)
    n = a.batch * a.batches
    ids = gen.integers(1000, a.vocab, size=(n, a.length), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    with open(os.path.join(a.dir, "inputs.jsonl"), "w") as f:
        for row in ids:
            f.write(json.dumps(row.tolist()) + "\n")
    onnx_path = os.path.join(a.dir, "model.onnx")
    example = (torch.from_numpy(ids[:a.batch]), torch.ones(a.batch, a.length, dtype=torch.long))
    torch.onnx.export(model, example, onnx_path + ".tmp", input_names=["input_ids", "attention_mask"],
                      output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": {0: "batch", 1: "length"},
                                    "attention_mask": {0: "batch", 1: "length"}, "logits": {0: "batch"}})
    os.replace(onnx_path + ".tmp", onnx_path)
    from onnxruntime.quantization import QuantType, quantize_dynamic
    int8_path = os.path.join(a.dir, "model-int8.onnx")
    quantize_dynamic(onnx_path, int8_path + ".tmp", weight_type=QuantType.QInt8)
    os.replace(int8_path + ".tmp", int8_path)
    # ONNX Runtime's BERT graph optimiser, and quantize_dynamic of its output: the forms its
    # documentation recommends for BERT on CPU. Failing here costs only these two engines.
    opt_path = os.path.join(a.dir, "model-bert-opt.onnx")
    info = {"num_heads": a.heads, "hidden_size": a.hidden}
    try:
        from onnxruntime.transformers.optimizer import optimize_model
        opt = optimize_model(onnx_path, model_type="bert", num_heads=a.heads, hidden_size=a.hidden)
        info["fused"] = {k: int(v) for k, v in opt.get_fused_operator_statistics().items() if v}
        opt.save_model_to_file(opt_path + ".tmp")
        os.replace(opt_path + ".tmp", opt_path)
    except Exception as e:  # recorded; run reports the engines n/a with it
        info["error"] = f"{type(e).__name__}: {e}"[:400]
    if "error" not in info:
        try:
            import onnx
            int8_opt = os.path.join(a.dir, "model-int8-bert-opt.onnx")
            # The fused ops (com.microsoft) defeat ONNX shape inference: their outputs are fp32.
            quantize_dynamic(opt_path, int8_opt + ".tmp", weight_type=QuantType.QInt8,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            os.replace(int8_opt + ".tmp", int8_opt)
        except Exception as e:
            info["int8_error"] = f"{type(e).__name__}: {e}"[:400]
    with open(os.path.join(a.dir, "model-bert-opt.json"), "w") as f:
        json.dump(info, f)
    return 0


def bert_opt_detail(a, int8):
    """What the BERT optimiser fused (or why it, or quantizing its graph, failed), from prepare's record."""
    path = os.path.join(a.dir, "model-bert-opt.json")
    info = json.load(open(path)) if os.path.exists(path) else {}
    if "error" in info:
        raise RuntimeError("the BERT graph optimiser failed in prepare: " + info["error"])
    if int8 and "int8_error" in info:
        raise RuntimeError("quantize_dynamic of the optimised graph failed in prepare: " + info["int8_error"])
    fused = info.get("fused", {})
    return "fused: " + (", ".join(f"{k} {v}" for k, v in sorted(fused.items())) or "nothing")


def make_engine(name, a, inputs):
    """(run_batch(i) → logits numpy (B, 2) float32, precision class, precision it ran, detail)."""
    import numpy as np
    mask = np.ones((a.batch, a.length), dtype=np.int64)
    if name.startswith("transformers-"):
        import torch
        from transformers import BertForSequenceClassification
        impl = "eager" if name == "transformers-eager" else "sdpa"
        model = BertForSequenceClassification.from_pretrained(os.path.join(a.dir, "model"),
                                                              attn_implementation=impl).eval()
        klass = "fp32"
        if name.endswith("-bf16"):
            model = model.to(torch.bfloat16)
            klass = "bf16"
        ids_t = [torch.from_numpy(x) for x in inputs]
        mask_t = torch.from_numpy(mask)

        def run(i):
            with torch.inference_mode():
                return model(input_ids=ids_t[i], attention_mask=mask_t).logits.float().numpy()
        return run, klass, klass, ""
    if name in ("onnxruntime", "onnxruntime-int8", "onnxruntime-bert-opt", "onnxruntime-int8-bert-opt"):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = a.threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        int8 = "-int8" in name
        opt = name.endswith("-bert-opt")
        detail = bert_opt_detail(a, int8) if opt else ""
        path = os.path.join(a.dir, "model" + ("-int8" if int8 else "") + ("-bert-opt" if opt else "") + ".onnx")
        session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        # The optimiser may turn the graph's integer inputs to int32: feed each input its own type.
        types = {i.name: (np.int32 if i.type == "tensor(int32)" else np.int64) for i in session.get_inputs()}
        feeds = [{k: v.astype(types[k]) for k, v in (("input_ids", x), ("attention_mask", mask)) if k in types}
                 for x in inputs]

        def run(i):
            return session.run(None, feeds[i])[0]
        klass = "int8" if int8 else "fp32"
        return run, klass, klass, detail
    if name in ("openvino-f32", "openvino-default", "openvino-f32-static", "openvino-default-static"):
        import openvino as ov
        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": a.threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
        if name.startswith("openvino-f32"):
            config["INFERENCE_PRECISION_HINT"] = "f32"
        model = core.read_model(os.path.join(a.dir, "model.onnx"))
        detail = "dynamic shapes"
        if name.endswith("-static"):  # the batch × length every call of the run has, fixed before compiling
            model.reshape({"input_ids": [a.batch, a.length], "attention_mask": [a.batch, a.length]})
            detail = f"static shape {a.batch}x{a.length}"
        compiled = core.compile_model(model, "CPU", config)
        hint = str(compiled.get_property("INFERENCE_PRECISION_HINT")).lower()  # "<Type: 'bfloat16'>"
        ran = ("bf16" if "bfloat16" in hint or "bf16" in hint else "fp16" if "float16" in hint or "f16" in hint
               else "fp32" if "float32" in hint or "f32" in hint else hint)
        request = compiled.create_infer_request()
        feeds = [{"input_ids": x, "attention_mask": mask} for x in inputs]

        def run(i):
            return np.array(request.infer(feeds[i])[compiled.output(0)], dtype=np.float32, copy=True)
        return run, ran if ran in CLASS_BOUND else "fp32", ran, detail
    raise SystemExit(f"peer_bench: unknown engine {name!r}")


def run_round(a):
    import numpy as np
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    import torch
    torch.set_num_threads(a.threads)
    inputs = load_inputs(a)
    reference = np.load(a.reference).astype(np.float64)
    samples_per_pass = a.batch * a.batches
    names = [e for e in a.engines.split(",") if e]
    for place, name in enumerate(reversed(names) if a.reverse else names, 1):
        try:
            run, klass, ran, detail = make_engine(name, a, inputs)
        except Exception as e:  # an engine that cannot load here: say so, the others still run
            print(json.dumps({"engine": name, "batch": a.batch, "length": a.length, "engine_place": place, "status": "n/a",
                              "reason": f"{type(e).__name__}: {e}"[:400]}), flush=True)
            continue
        logits = np.concatenate([run(i) for i in range(a.batches)]).astype(np.float64)
        rel_l2 = float(np.linalg.norm(logits - reference) / np.linalg.norm(reference))
        kept = int((logits.argmax(1) == reference.argmax(1)).sum())  # predictions the reference's top-1 keeps
        for _ in range(a.warmup):
            for i in range(a.batches):
                run(i)
        rates = []
        for _ in range(a.passes):
            t0 = time.perf_counter()
            for i in range(a.batches):
                run(i)
            rates.append(samples_per_pass / (time.perf_counter() - t0))
        bound = CLASS_BOUND[klass]
        print(json.dumps({"engine": name, "batch": a.batch, "length": a.length, "class": klass, "ran": ran,
                          "detail": detail, "engine_place": place, "pass_samples_per_s": rates,
                          "samples_per_s": math.exp(sum(math.log(r) for r in rates) / len(rates)),
                          "rel_l2": rel_l2, "kept": kept, "compared": int(len(reference)), "bound": bound,
                          "status": "PASS" if math.isfinite(rel_l2) and rel_l2 <= bound else "FLAGGED"}), flush=True)
        del run
    return 0


def main():
    a = parse_args()
    return prepare(a) if a.cmd == "prepare" else run_round(a)


if __name__ == "__main__":
    sys.exit(main())
