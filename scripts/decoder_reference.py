#!/usr/bin/env python3
"""Hugging Face's side of the decoder reference test (tests/model/test_decoder_reference.cpp).

  decoder_reference.py --family gpt2|llama --out DIR [--new-tokens 8]

Builds a tiny GPT2LMHeadModel or LlamaForCausalLM from seeded random weights, saves it with
save_pretrained (DIR/model.safetensors, DIR/config.json), generates greedily from seeded prompts
with transformers' generate() (eager attention, float32, no end-of-sequence stop), and writes
DIR/reference.json: the dimensions, the prompts, the generated tokens and the logits at each
generated position, teacher-forced in one forward over prompt + tokens.

Exits 3 when transformers cannot be imported, so the test skips with that reason.
"""
import argparse
import json
import pathlib
import sys

try:
    import torch
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM
except ImportError as e:  # the test skips on 3
    print(f"transformers is not importable here: {e}", file=sys.stderr)
    sys.exit(3)

DIMS = {
    "gpt2": dict(layers=2, hidden=64, heads=4, kv_heads=4, ffn=256, vocab=512, max_positions=128, eps=1e-5),
    "llama": dict(layers=2, hidden=64, heads=4, kv_heads=2, ffn=176, vocab=512, max_positions=128, eps=1e-6,
                  rope_theta=10000.0),
}
# Wider than GPT-2's 0.02, so the tiny random model's top logits are separated by more than
# float32 rounding: greedy tokens then depend on the arithmetic, not on ties.
INIT_RANGE = 0.2


def build(family):
    d = DIMS[family]
    if family == "gpt2":
        cfg = GPT2Config(n_layer=d["layers"], n_embd=d["hidden"], n_head=d["heads"], n_inner=d["ffn"],
                         vocab_size=d["vocab"], n_positions=d["max_positions"], layer_norm_epsilon=d["eps"],
                         activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                         initializer_range=INIT_RANGE, bos_token_id=None, eos_token_id=None)
        model_cls = GPT2LMHeadModel
    else:
        cfg = LlamaConfig(num_hidden_layers=d["layers"], hidden_size=d["hidden"], num_attention_heads=d["heads"],
                          num_key_value_heads=d["kv_heads"], intermediate_size=d["ffn"], vocab_size=d["vocab"],
                          max_position_embeddings=d["max_positions"], rms_norm_eps=d["eps"],
                          rope_theta=d["rope_theta"], tie_word_embeddings=False, attention_bias=False,
                          mlp_bias=False, initializer_range=INIT_RANGE, bos_token_id=None, eos_token_id=None,
                          pad_token_id=None)
        model_cls = LlamaForCausalLM
    cfg._attn_implementation = "eager"
    torch.manual_seed(1234)
    model = model_cls(cfg).eval()
    return model, d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", choices=sorted(DIMS), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--new-tokens", type=int, default=8)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model, d = build(args.family)
    model.save_pretrained(out, safe_serialization=True)
    gen = torch.Generator().manual_seed(99)
    prompts = torch.randint(0, d["vocab"], (2, 7), generator=gen)
    with torch.no_grad():
        generated = model.generate(prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=args.new_tokens,
                                   min_new_tokens=args.new_tokens, do_sample=False, num_beams=1,
                                   eos_token_id=None, pad_token_id=0)
        tokens = generated[:, prompts.shape[1]:]
        full = torch.cat([prompts, tokens[:, :-1]], dim=1)
        logits = model(full).logits[:, prompts.shape[1] - 1:, :]
    ref = {"family": args.family, "transformers": transformers.__version__, "torch": torch.__version__, **d,
           "prompts": prompts.tolist(), "tokens": tokens.tolist(), "logits": logits.float().tolist()}
    (out / "reference.json").write_text(json.dumps(ref))


if __name__ == "__main__":
    main()
