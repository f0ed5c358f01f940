// A Hugging Face BERT config.json → the built-in encoder's dimensions.
#pragma once

#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/config.hpp"

namespace attnbench {

// Fills layers, hidden, heads, ffn, vocab_size, max_positions, type_vocab_size and
// layer_norm_eps of `model` from the config.json at `path`. Returns the problems found, each
// with `json_path` (the config key that named the file) and the offending config.json key: a
// model the built-in encoder cannot reproduce (not BERT, another activation, relative
// positions, a decoder) is refused rather than run wrong.
std::vector<problem> apply_hf_config(const std::string& path, const std::string& json_path,
                                     model_config& model);

}  // namespace attnbench
