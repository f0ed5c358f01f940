#!/usr/bin/env python3
"""A byte-level BPE (GPT-2's kind) trained on a corpus with Hugging Face's `tokenizers`.

  corpus_bpe.py train --corpus FILE --vocab-size N --out tokenizer.json
  corpus_bpe.py reference --corpus FILE --vocab-size N --out DIR

train: trains the tokenizer (ByteLevel pre-tokenizer without a prefix space, as GPT-2's; the 256
byte symbols as its initial alphabet; one special token, <|endoftext|>, id 0) and saves it.
configs/data/handbook-bpe.json is `train --corpus configs/data/handbook-corpus.txt --vocab-size
4096`; the same `tokenizers` version gives the same file.

reference: Hugging Face's side of the BPE reference test (tests/workload/test_bpe_tokenizer.cpp):
trains as above into DIR, writes the file three ways (DIR/pairs.json as `tokenizers` saves it,
merges as ["a", "b"]; DIR/strings.json with merges as "a b" strings; DIR/prefix.json with
add_prefix_space set) and DIR/reference.json: every corpus line and some hard strings, with the
ids each file gives them (encode_special_tokens set: added tokens in the text are text).

Exits 3 when `tokenizers` cannot be imported, so the test skips with that reason.
"""
import argparse
import json
import pathlib
import sys

try:
    import tokenizers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
except ImportError as e:  # the test skips on 3
    print(f"tokenizers is not importable here: {e}", file=sys.stderr)
    sys.exit(3)

SPECIAL = "<|endoftext|>"

# What GPT-2's split and the byte map have to get right beyond ordinary prose.
HARD = [
    "日本語のテキストです。東京都",
    "emoji 🙂👍🏽 and a family 👨‍👩‍👧 and flags 🇫🇷",
    "numbers 123 4567.89 1,000,000 0x1F ٣٤٥ Ⅻ x² ½",
    "contractions: it's we're they've I'm we'll he'd don't DON'T 'tis rock'n'roll o'clock",
    "multiple   spaces    between  words  ",
    "   leading spaces",
    "new\nlines\n\nand\r\nreturns\n",
    "\ttabs\tand\t\ttabs \t mixed",
    "  \n  x",
    "no-break\u00a0space, ideographic\u3000space, thin\u2009space",
    "combining e\u0301 and precomposed é, Ångström, naïve",
    "punctuation!!! ...??? «quotes» “curly” — dashes – (brackets) [x] {y} <z>",
    "symbols $5 €10 ¥ 100% a+b=c ~tilde^ `backtick` @at #hash",
    "url https://example.org/a_b-c?d=e&f=g#h and path /usr/lib/x86_64-linux-gnu",
    "Ελληνικά, русский, العربية, עברית, हिन्दी, 한국어",
    SPECIAL + " in the text is text",
    "'s at the start",
    "x",
    " ",
    "\n",
]


def train(corpus, vocab_size):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[SPECIAL], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train([str(corpus)], trainer)
    return tok


def encode_all(path, lines):
    tok = Tokenizer.from_file(str(path))
    tok.encode_special_tokens = True
    return [tok.encode(line).ids for line in lines]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["train", "reference"])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--vocab-size", type=int, required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    tok = train(args.corpus, args.vocab_size)
    if args.mode == "train":
        tok.save(args.out)
        return
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs = out / "pairs.json"
    tok.save(str(pairs))
    doc = json.loads(pairs.read_text())
    if not all(isinstance(m, list) for m in doc["model"]["merges"]):
        raise SystemExit(f"tokenizers {tokenizers.__version__} did not save merges as pairs")
    strings = dict(doc, model=dict(doc["model"], merges=[" ".join(m) for m in doc["model"]["merges"]]))
    (out / "strings.json").write_text(json.dumps(strings, ensure_ascii=False))
    prefix = dict(doc, pre_tokenizer=dict(doc["pre_tokenizer"], add_prefix_space=True))
    (out / "prefix.json").write_text(json.dumps(prefix, ensure_ascii=False))
    with open(args.corpus, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    lines += HARD
    ref = {"tokenizers": tokenizers.__version__, "vocab_size": tok.get_vocab_size(), "lines": lines,
           "ids": {name: encode_all(out / f"{name}.json", lines) for name in ("pairs", "strings", "prefix")}}
    (out / "reference.json").write_text(json.dumps(ref, ensure_ascii=False))


if __name__ == "__main__":
    main()
