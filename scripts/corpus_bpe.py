#!/usr/bin/env python3
"""A byte-level BPE (GPT-2's kind) trained on a corpus with Hugging Face's `tokenizers`.

  corpus_bpe.py train --corpus FILE --vocab-size N --out tokenizer.json
  corpus_bpe.py reference --corpus FILE --vocab-size N [--lines K] --out DIR
  corpus_bpe.py fixture --tokenizer FILE --corpus FILE --lines K --out FILE

train: trains the tokenizer (ByteLevel pre-tokenizer without a prefix space, as GPT-2's; the 256
byte symbols as its initial alphabet; one special token, <|endoftext|>, id 0) and saves it.
configs/data/handbook-bpe.json is `train --corpus configs/data/handbook-corpus.txt --vocab-size
4096`; the same `tokenizers` version gives the same file.

reference: Hugging Face's side of the live BPE reference test (tests/workload/test_bpe_tokenizer.cpp):
trains as above into DIR, writes the file three ways (DIR/pairs.json as `tokenizers` saves it,
merges as ["a", "b"]; DIR/strings.json with merges as "a b" strings; DIR/prefix.json with
add_prefix_space set) and DIR/reference.json: the corpus's lines (the first K with --lines; the
languages are interleaved, so they are a representative subset) and the hard strings below, with
the ids each file gives them (encode_special_tokens set: added tokens in the text are text). The
test asks for 400 lines, to stay fast; without --lines every line (all 2400 were checked by hand).

fixture: the committed side of the same test, for machines without `tokenizers`: the ids the three
forms of an existing tokenizer file give the first K corpus lines and the hard strings, with the
`tokenizers` version and the file's FNV-1a 64 (so the test can tell a fixture made from another
file). tests/workload/fixtures/bpe_reference.json is `fixture --tokenizer
configs/data/handbook-bpe.json --corpus configs/data/handbook-corpus.txt --lines 40 --out
tests/workload/fixtures/bpe_reference.json`.

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


def fnv1a64(data):
    """FNV-1a 64 of bytes, as attnbench's common/hash.hpp computes it."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def forms(doc):
    """The three forms of one tokenizer.json: as saved (merges as pairs), merges as "a b" strings,
    and add_prefix_space set."""
    if not all(isinstance(m, list) for m in doc["model"]["merges"]):
        raise SystemExit(f"tokenizers {tokenizers.__version__} did not save merges as pairs")
    strings = dict(doc, model=dict(doc["model"], merges=[" ".join(m) for m in doc["model"]["merges"]]))
    prefix = dict(doc, pre_tokenizer=dict(doc["pre_tokenizer"], add_prefix_space=True))
    return {"pairs": doc, "strings": strings, "prefix": prefix}


def encode_all(text, lines):
    tok = Tokenizer.from_str(text)
    tok.encode_special_tokens = True
    return [tok.encode(line).ids for line in lines]


def one_per_line(doc):
    """JSON with each line and each id list on a line of its own: a regenerated fixture diffs by line."""
    def dump(v):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":") if isinstance(v, list) else (", ", ": "))

    def block(v):
        return "[\n" + ",\n".join(dump(x) for x in v) + "\n]"

    parts = []
    for key, value in doc.items():
        if key == "lines":
            parts.append(f"{dump(key)}: {block(value)}")
        elif key == "ids":
            inner = ",\n".join(f"{dump(name)}: {block(rows)}" for name, rows in value.items())
            parts.append(f"{dump(key)}: {{\n{inner}\n}}")
        else:
            parts.append(f"{dump(key)}: {dump(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def corpus_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["train", "reference", "fixture"])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--vocab-size", type=int, help="train, reference")
    ap.add_argument("--tokenizer", help="fixture: the tokenizer.json to encode with")
    ap.add_argument("--lines", type=int, help="fixture (default 40), reference (default all): how many corpus "
                    "lines, from the first")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.mode == "fixture":
        if not args.tokenizer:
            ap.error("fixture needs --tokenizer")
        data = pathlib.Path(args.tokenizer).read_bytes()
        lines = corpus_lines(args.corpus)[: args.lines or 40] + HARD
        ids = {name: encode_all(json.dumps(doc, ensure_ascii=False), lines)
               for name, doc in forms(json.loads(data)).items()}
        fixture = {"generated_by": "scripts/corpus_bpe.py " + " ".join(sys.argv[1:]),
                   "tokenizers": tokenizers.__version__, "tokenizer": args.tokenizer,
                   "tokenizer_fnv1a64": fnv1a64(data), "lines": lines, "ids": ids}
        pathlib.Path(args.out).write_text(one_per_line(fixture), encoding="utf-8")
        return
    if not args.vocab_size:
        ap.error(f"{args.mode} needs --vocab-size")
    tok = train(args.corpus, args.vocab_size)
    if args.mode == "train":
        tok.save(args.out)
        return
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pairs = out / "pairs.json"
    tok.save(str(pairs))
    lines = corpus_lines(args.corpus)[: args.lines] + HARD
    ids = {}
    for name, doc in forms(json.loads(pairs.read_text(encoding="utf-8"))).items():
        text = pairs.read_text(encoding="utf-8") if name == "pairs" else json.dumps(doc, ensure_ascii=False)
        if name != "pairs":
            (out / f"{name}.json").write_text(text, encoding="utf-8")
        ids[name] = encode_all(text, lines)
    ref = {"tokenizers": tokenizers.__version__, "vocab_size": tok.get_vocab_size(), "lines": lines, "ids": ids}
    (out / "reference.json").write_text(json.dumps(ref, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
