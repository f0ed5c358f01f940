#!/usr/bin/env python3
"""Exports a Hugging Face BERT-style model to TorchScript for `model: {"torchscript": ...}`.

  /opt/attnbench/venv/bin/python scripts/export_torchscript.py MODEL_DIR_OR_NAME out.pt [--max-length 128]

The module takes (input_ids, attention_mask), both int64 (B, S), and returns the model's first
output: logits (B, num_labels) for a classification model, the last hidden state (B, S, H) for a
bare encoder (attnbench mean-pools that over real tokens). Traced with eager attention and a
padded example batch, so the masked path is what gets recorded.
"""
import argparse
import sys

import torch


class FirstOutput(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]


def export(model, path, input_ids, attention_mask):
    model = model.eval()
    with torch.no_grad():
        traced = torch.jit.trace(FirstOutput(model), (input_ids, attention_mask), check_trace=False, strict=False)
    traced.save(str(path))
    return traced


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a local model directory (or a hub name, when online)")
    parser.add_argument("output", help="where to write the TorchScript module")
    parser.add_argument("--max-length", type=int, default=16, help="example sequence length for tracing")
    args = parser.parse_args()
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoConfig
    cfg = AutoConfig.from_pretrained(args.model)
    arch = (cfg.architectures or [""])[0]
    loader = AutoModelForSequenceClassification if "SequenceClassification" in arch else AutoModel
    model = loader.from_pretrained(args.model, attn_implementation="eager")
    s = args.max_length
    ids = torch.randint(1000, min(cfg.vocab_size, 2000), (2, s))
    mask = torch.ones(2, s, dtype=torch.long)
    mask[0, s // 2:] = 0  # one padded row, so tracing records the masked path
    export(model, args.output, ids, mask)
    print(f"wrote {args.output} ({arch or type(model).__name__})", file=sys.stderr)


if __name__ == "__main__":
    main()
