// The workload: token-id sequences, generated from a seed or read from a JSONL file.
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
  std::vector<std::vector<int64_t>> samples;  // token ids, [CLS] … [SEP], each ≤ max_length
  std::string description;                    // e.g. "lognormal(median=128, sigma=0.6) in [16, 512]"
  int64_t real_tokens() const;
  int64_t min_length() const;
  int64_t max_length() const;
  double mean_length() const;
};

// Throws input_error (path "workload.file", with the file's line number) for a bad JSONL file.
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
