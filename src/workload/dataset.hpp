// The workload: token-id sequences, generated from a seed, read from a JSONL file, or text
// tokenized one line a sample (WordPiece for an encoder, byte-level BPE for a decoder).
//
// Generated samples have the shape of BERT input: [CLS] random-tokens [SEP], with lengths drawn
// from the configured distribution. Generation uses only std::mt19937_64 and our own transforms
// of its output (std::*_distribution differ between standard libraries), so a seed gives the
// same workload on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace attnbench {

struct dataset {
  std::vector<std::vector<int64_t>> samples;  // token ids (an encoder's [CLS] … [SEP]), each ≤ max_length
  std::string description;                    // e.g. "lognormal(median=128, sigma=0.6) in [16, 512]"
  // A text workload's tokenizer file (vocab.txt or tokenizer.json) and the FNV-1a 64 of its bytes:
  // what names exactly which tokenizer made the samples. Empty for token ids.
  std::string tokenizer;
  std::string tokenizer_fnv1a64;
  int64_t real_tokens() const;
  int64_t min_length() const;
  int64_t max_length() const;
  double mean_length() const;
};

// Throws input_error (path "workload.file", with the file's line number) for a bad JSONL file;
// for text, at "workload.text", "workload.vocab" or "workload.tokenizer" (a tokenizer.json it
// cannot read or does not implement, or one whose largest id is not below model.vocab_size).
dataset make_dataset(const workload_config& workload, const model_config& model);

// Special token ids: BERT's 101/102 when the vocabulary has them (≥ 1000 entries), else 1/2.
struct special_tokens {
  int64_t pad = 0;
  int64_t cls = 0;
  int64_t sep = 0;
  int64_t first_regular = 0;  // random tokens are drawn from [first_regular, vocab_size)
};
special_tokens special_tokens_for(int64_t vocab_size);

}  // namespace attnbench
