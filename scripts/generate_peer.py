#!/usr/bin/env python3
"""transformers' generate() as a peer of attnbench's generate scenario (issue 41 part 6).

  generate_peer.py prepare --out DIR [--preset llama-160m] [--prompts 4] [--length 64]
                           [--new-tokens 32] [--threads 2] [--seed 1]
                           [--text configs/data/handbook-corpus.txt] [--tokenizer configs/data/handbook-bpe.json]
                           [--random-ids]
  generate_peer.py bench --dir DIR --engine hf-sdpa|hf-eager [--passes 3] [--threads 2]
  generate_peer.py table --dir DIR

prepare: one seeded LlamaForCausalLM (or GPT2LMHeadModel) in the shape of an attnbench decoder
preset, read from src/config/decoder_presets.hpp (so the two cannot drift: attnbench refuses
weights whose shapes differ from its preset's), saved with save_pretrained in DIR/model; the
prompts in DIR/prompts.jsonl; and DIR/config.json, attnbench's generate config over the same weights,
prompts, new tokens and threads (fp32, SDPA, one prompt at a time). The prompts are the first
--prompts non-blank lines of --text, each through --tokenizer (a byte-level BPE tokenizer.json) by
the tokenizers library, no special token added, cut to --length ids; attnbench's config names the
same text and tokenizer, so attnbench tokenizes them with its own tokenizer and the table checks
that both sides prefilled the same number of tokens. --random-ids gives seeded ids of --length
tokens instead, handed to both sides as ids.

bench: one round of one transformers engine, fp32, one prompt at a time as attnbench's baseline,
greedy, no end-of-sequence stop. optimum-benchmark's split of generate(): per prompt, the time of
generate(max_new_tokens=1) is the prefill (time to first token) and generate(max_new_tokens=N)
minus it the N - 1 decode steps. One untimed pass, then --passes timed passes; the round's figure
is the geometric mean of its passes. Prints one JSON object: the figures and the greedy tokens.

table: reads DIR/rounds.jsonl (the peer rounds) and DIR/attnbench-r<k>/ (attnbench's rounds:
results.json, outputs/baseline.npy) and writes DIR/peers.md and DIR/peers.json: per engine the
prefill and decode tokens/s and TTFT, geometric mean over the rounds with a 95% t interval;
attnbench / peer per round, paired, with its interval and a verdict read from the interval only;
and whether each peer generated attnbench's tokens (k of N sequences).

Exits 3 when transformers cannot be imported.
"""
import argparse
import json
import math
import os
import pathlib
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_table import T95, paired_interval, verdict, with_interval  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
PRESETS = ROOT / "src" / "config" / "decoder_presets.hpp"
ENGINES = {"hf-sdpa": "sdpa", "hf-eager": "eager"}


def read_preset(name):
    """The preset's dims as decoder_presets.hpp declares them (name, family, layers, hidden, heads,
    kv_heads, ffn, vocab, max_positions, rope_theta)."""
    row = re.compile(r'\{"([\w.-]+)", model_family::(\w+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+)\}')
    for m in row.finditer(PRESETS.read_text()):
        if m.group(1) == name:
            keys = ["layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "max_positions", "rope_theta"]
            return {"family": m.group(2), **{k: int(v) for k, v in zip(keys, m.groups()[2:])}}
    sys.exit(f"generate_peer.py: no decoder preset {name!r} in {PRESETS}")


def import_transformers():
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        print(f"transformers is not importable here: {e}", file=sys.stderr)
        sys.exit(3)


def build(d, seed):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
    if d["family"] == "gpt2":
        cfg = GPT2Config(n_layer=d["layers"], n_embd=d["hidden"], n_head=d["heads"], n_inner=d["ffn"],
                         vocab_size=d["vocab"], n_positions=d["max_positions"], layer_norm_epsilon=1e-5,
                         activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                         bos_token_id=None, eos_token_id=None)
        cls = GPT2LMHeadModel
    else:
        cfg = LlamaConfig(num_hidden_layers=d["layers"], hidden_size=d["hidden"], num_attention_heads=d["heads"],
                          num_key_value_heads=d["kv_heads"], intermediate_size=d["ffn"], vocab_size=d["vocab"],
                          max_position_embeddings=d["max_positions"], rms_norm_eps=1e-6,
                          rope_theta=float(d["rope_theta"]), tie_word_embeddings=False, attention_bias=False,
                          mlp_bias=False, bos_token_id=None, eos_token_id=None, pad_token_id=None)
        cls = LlamaForCausalLM
    torch.manual_seed(seed)
    return cls(cfg).eval()


def prepare(a):
    import_transformers()
    import torch
    d = read_preset(a.preset)
    out = pathlib.Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    build(d, a.seed).save_pretrained(out / "model", safe_serialization=True)
    if a.random_ids:
        gen = torch.Generator().manual_seed(a.seed + 1)
        prompts = torch.randint(0, d["vocab"], (a.prompts, a.length), generator=gen).tolist()
        workload = {"file": str(out / "prompts.jsonl"), "samples": a.prompts, "max_length": a.length}
        source = f"seeded random ids (seed {a.seed + 1})"
    else:
        text, tok = pathlib.Path(a.text).resolve(), pathlib.Path(a.tokenizer).resolve()
        prompts = text_prompts(text, tok, a.prompts, a.length, d["vocab"])
        workload = {"text": str(text), "tokenizer": str(tok), "samples": a.prompts, "max_length": a.length}
        source = f"the first {len(prompts)} lines of {rel(text)} through {rel(tok)}"
    (out / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    cfg = {
        "schema_version": 1,
        "name": "generate-peer",
        "description": f"attnbench's side of scripts/generate-peer.sh: {a.preset} with transformers' seeded "
                       "random weights, fp32, SDPA, one prompt at a time",
        "scenario": "generate",
        "model": {"config": str(out / "model" / "config.json"), "weights": str(out / "model" / "model.safetensors")},
        "workload": workload,
        "generate": {"max_new_tokens": a.new_tokens},
        "measure": {"warmup": 1, "repetitions": a.passes},
        "device": "cpu",
        "threads": a.threads,
        "variants": [{"name": "baseline", "precision": "fp32", "attention": "sdpa", "batching": {"batch_size": 1}}],
        "baseline": "baseline",
        "output": {"dir": str(out / "attnbench"), "formats": ["json", "md"]},
    }
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    lengths = [len(p) for p in prompts]
    (out / "peer.json").write_text(json.dumps({"preset": a.preset, "dims": d, "seed": a.seed, "prompts": len(prompts),
                                               "length": a.length, "prompt_source": source,
                                               "prompt_lengths": lengths, "prompt_tokens": sum(lengths),
                                               "new_tokens": a.new_tokens, "threads": a.threads}, indent=2) + "\n")


def rel(path):
    try:
        return str(pathlib.Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def text_prompts(text, tokenizer, count, length, vocab):
    """The first `count` non-blank lines of `text` (blank: spaces and tabs only, as attnbench reads
    workload.text), each through the tokenizers library's reading of `tokenizer` with no special
    token added, cut to `length` ids."""
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(tokenizer))
    if tok.get_vocab_size() > vocab:
        sys.exit(f"generate_peer.py: {tokenizer} has {tok.get_vocab_size()} tokens, more than the preset's vocab {vocab}")
    lines = corpus_lines(text.read_text(encoding="utf-8"), count)
    if not lines:
        sys.exit(f"generate_peer.py: {text} holds no non-blank line")
    return [tok.encode(line, add_special_tokens=False).ids[:length] for line in lines]


def corpus_lines(text, count):
    """The first `count` lines of `text` that attnbench's workload.text takes: a trailing \\r
    dropped, lines of only spaces and tabs skipped."""
    lines = []
    for line in text.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip(" \t"):
            continue
        if len(lines) == count:
            break
        lines.append(line)
    return lines


def check_prefilled(meta, results, round_):
    """Exits when attnbench's run (its results.json) prefilled another token count than the peers'
    prompts hold: the two tokenizers read the text differently, and the table would compare
    different work."""
    prefilled = results.get("workload", {}).get("real_tokens")
    if "prompt_tokens" in meta and prefilled != meta["prompt_tokens"]:
        sys.exit(f"generate_peer.py: attnbench prefilled {prefilled} prompt tokens in round {round_}, the peers "
                 f"{meta['prompt_tokens']}: the two tokenizers disagree on these prompts")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def bench(a):
    import_transformers()
    import torch
    import transformers
    from transformers import AutoModelForCausalLM
    d = pathlib.Path(a.dir)
    meta = json.loads((d / "peer.json").read_text())
    torch.set_num_threads(a.threads)
    model = AutoModelForCausalLM.from_pretrained(d / "model", attn_implementation=ENGINES[a.engine],
                                                 dtype=torch.float32).eval()
    prompts = [torch.tensor([json.loads(line)], dtype=torch.long) for line in (d / "prompts.jsonl").read_text().splitlines() if line.strip()]
    n = meta["new_tokens"]

    def gen(p, new):
        return model.generate(p, attention_mask=torch.ones_like(p), max_new_tokens=new, min_new_tokens=new,
                              do_sample=False, num_beams=1, eos_token_id=None, pad_token_id=0)

    def one_pass():
        prefill_s, decode_s, tokens = 0.0, 0.0, []
        for p in prompts:
            t0 = time.perf_counter()
            gen(p, 1)
            t1 = time.perf_counter()
            out = gen(p, n)
            t2 = time.perf_counter()
            prefill_s += t1 - t0
            decode_s += max((t2 - t1) - (t1 - t0), 1e-9)
            tokens.append(out[0, p.shape[1]:].tolist())
        return prefill_s, decode_s, tokens

    with torch.inference_mode():
        _, _, tokens = one_pass()
        passes = [one_pass() for _ in range(a.passes)]
    prompt_tokens = sum(p.shape[1] for p in prompts)
    print(json.dumps({
        "engine": a.engine, "transformers": transformers.__version__, "torch": torch.__version__,
        "threads": a.threads, "passes": a.passes,
        "prefill_tokens_per_s": geomean([prompt_tokens / s for s, _, _ in passes]),
        "decode_tokens_per_s": geomean([len(prompts) * (n - 1) / s for _, s, _ in passes]),
        "time_to_first_token_ms": geomean([s / len(prompts) * 1e3 for s, _, _ in passes]),
        "tokens": tokens,
    }))


def interval(xs):
    """Geometric mean of xs with its 95% t interval on the logs (None without two)."""
    logs = [math.log(x) for x in xs]
    m = sum(logs) / len(logs)
    if len(logs) < 2:
        return math.exp(m), None, None
    sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (len(logs) - 1))
    half = (T95[len(logs) - 2] if len(logs) - 1 <= len(T95) else 1.96) * sd / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - half), math.exp(m + half)


def fmt_interval(xs, digits=1):
    c, lo, hi = interval(xs)
    return f"{c:.{digits}f}" + ("" if lo is None else f" [{lo:.{digits}f}–{hi:.{digits}f}]")


def prompt_words(meta):
    """How the table names the prompts: where they came from and their lengths."""
    if "prompt_lengths" not in meta:  # a directory prepared before prompts could come from text
        return f"{meta['prompts']} prompts of {meta['length']} tokens"
    lo, hi = min(meta["prompt_lengths"]), max(meta["prompt_lengths"])
    size = f"{lo} tokens" if lo == hi else f"{lo}–{hi} tokens"
    return (f"{meta['prompts']} prompts of {size} ({meta['prompt_tokens']} in all, the same count on both "
            f"sides), {meta['prompt_source']}")


def table(a):
    import numpy as np
    d = pathlib.Path(a.dir)
    meta = json.loads((d / "peer.json").read_text())
    rounds = {}  # engine → {round: figures}
    order = []
    for line in (d / "rounds.jsonl").read_text().splitlines():
        r = json.loads(line)
        rounds.setdefault(r["engine"], {})[r["round"]] = r
        order.append((r["round"], r["engine"], r["place"]))
    ours, cpu = {}, ""
    reference = None
    for k in sorted(int(p.name.split("-r")[1]) for p in d.glob("attnbench-r*")):
        folder = d / f"attnbench-r{k}"
        res = json.loads((folder / "results.json").read_text())
        v = next(v for v in res["variants"] if v["name"] == "baseline")
        metric = {m["name"]: m["value"] for m in v["metrics"]}
        ours[k] = {"prefill_tokens_per_s": metric["prefill_tokens_per_s"],
                   "decode_tokens_per_s": metric["decode_tokens_per_s"],
                   "time_to_first_token_ms": metric["time_to_first_token_ms"], "status": v["status"]}
        check_prefilled(meta, res, k)
        env = res.get("environment", {})
        cpu = f"{env.get('cpu_model', '?')} ({env.get('cpu_id', '?')}; {' '.join(env.get('cpu_features', []))})"
        tok = np.load(folder / "outputs" / "baseline.npy").astype(np.int64).tolist()
        if reference is None:
            reference = tok
        elif tok != reference:
            sys.exit(f"generate_peer.py: attnbench's tokens differ between rounds (round {k})")
    if not ours:
        sys.exit(f"generate_peer.py: no attnbench-r<k> folder in {d}")
    engines = {"attnbench": ours, **rounds}
    figures = ["prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms"]
    lines = [f"# transformers' generate() beside attnbench ({meta['preset']})", "",
             f"CPU {cpu}; {meta['threads']} threads; {prompt_words(meta)}, "
             f"{meta['new_tokens']} new tokens each, greedy, fp32, one prompt at a time; transformers' seeded random "
             f"weights (seed {meta['seed']}), the same file for both. {len(ours)} rounds, the order alternating "
             "(attnbench first in odd rounds). Figures: geometric mean over the rounds, in brackets the 95% t "
             "interval on the logs. Peer: optimum-benchmark's split, generate(max_new_tokens=1) as the prefill and "
             "generate(N) minus it as the decode; attnbench: its generate scenario's own timing.", "",
             "| engine | prefill tokens/s | decode tokens/s | TTFT (ms) | tokens as attnbench's |",
             "| --- | ---: | ---: | ---: | --- |"]
    table_rows = []
    for name, by_round in engines.items():
        rs = [by_round[k] for k in sorted(by_round)]
        if name == "attnbench":
            same = f"(reference; check {', '.join(sorted({r['status'] for r in rs}))})"
            kept = None
        else:
            toks = rs[-1]["tokens"]
            kept = sum(1 for x, y in zip(toks, reference) if x == y)
            same = f"{kept} of {len(reference)} sequences identical"
        lines.append(f"| {name} | " + " | ".join(fmt_interval([r[f] for r in rs], 2 if f.endswith("_ms") else 1)
                                                for f in figures) + f" | {same} |")
        table_rows.append({"engine": name, **{f: interval([r[f] for r in rs])[0] for f in figures},
                           "identical": kept, "sequences": len(reference)})
    lines += ["", "attnbench ÷ peer, paired by round (tokens/s: above 1 is attnbench ahead):", "",
              "| peer | prefill | decode | verdict (prefill, decode) |", "| --- | ---: | ---: | --- |"]
    ratios = []
    for name, by_round in rounds.items():
        cells, verdicts = [], []
        for f in figures[:2]:
            r, lo, hi, _ = paired_interval({k: v[f] for k, v in ours.items()}, {k: v[f] for k, v in by_round.items()})
            cells.append(with_interval(r, lo, hi))
            verdicts.append(verdict(lo, hi))
            ratios.append({"peer": name, "figure": f, "ratio": r, "low": lo, "high": hi})
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {verdicts[0]}, {verdicts[1]} |")
    (d / "peers.md").write_text("\n".join(lines) + "\n")
    (d / "peers.json").write_text(json.dumps({"meta": meta, "cpu": cpu, "order": order, "table": table_rows,
                                              "ratios": ratios, "rounds": {k: v for k, v in rounds.items()},
                                              "attnbench": ours}, indent=2) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--out", required=True)
    p.add_argument("--preset", default="llama-160m")
    p.add_argument("--prompts", type=int, default=4)
    p.add_argument("--length", type=int, default=64)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--text", default=str(ROOT / "configs" / "data" / "handbook-corpus.txt"))
    p.add_argument("--tokenizer", default=str(ROOT / "configs" / "data" / "handbook-bpe.json"))
    p.add_argument("--random-ids", action="store_true")
    b = sub.add_parser("bench")
    b.add_argument("--dir", required=True)
    b.add_argument("--engine", choices=sorted(ENGINES), required=True)
    b.add_argument("--passes", type=int, default=3)
    b.add_argument("--threads", type=int, default=2)
    t = sub.add_parser("table")
    t.add_argument("--dir", required=True)
    a = ap.parse_args()
    {"prepare": prepare, "bench": bench, "table": table}[a.cmd](a)


if __name__ == "__main__":
    main()
