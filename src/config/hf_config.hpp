// A Hugging Face config.json → the built-in encoder's dimensions (BERT), or a decoder's (Llama, GPT-2).
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
// positions, a decoder) is refused rather than run wrong. A "llama" or "gpt2" config.json
// (LlamaForCausalLM, GPT2LMHeadModel) sets the decoder's family, layers, hidden, heads, kv_heads,
// ffn, vocab_size, max_positions, norm eps and rope_theta instead, and refuses what the decoder
// does not compute (scaled rotary embeddings, biases in a Llama, another activation).
std::vector<problem> apply_hf_config(const std::string& path, const std::string& json_path,
                                     model_config& model);

}  // namespace attnbench
