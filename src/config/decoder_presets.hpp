// The decoder presets ("model": {"preset": "gpt2-tiny"}) and the generate scenario's defaults.
// The ladder: tiny shapes for tests, GPT-2 small (124M) as Hugging Face's "gpt2", and Llama-style
// shapes up to TinyLlama-1.1B's (grouped-query attention, 4 key/value heads for 32 query heads).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "config/config.hpp"

namespace attnbench::defaults {

struct decoder_preset {
  std::string_view name;
  model_family family;
  int64_t layers, hidden, heads, kv_heads, ffn, vocab_size, max_positions;
  double rope_theta;  // llama; 0 for gpt2
};

inline constexpr std::array<decoder_preset, 5> decoder_presets{{
    {"gpt2-tiny", model_family::gpt2, 2, 64, 4, 4, 256, 512, 256, 0},
    {"gpt2", model_family::gpt2, 12, 768, 12, 12, 3072, 50257, 1024, 0},
    {"llama-tiny", model_family::llama, 2, 64, 4, 2, 176, 512, 512, 10000},
    {"llama-160m", model_family::llama, 12, 768, 12, 4, 2048, 32000, 2048, 10000},
    {"llama-1b", model_family::llama, 22, 2048, 32, 4, 5632, 32000, 2048, 10000},
}};

// Tokens generated after each prompt when generate.max_new_tokens is not given: llama-bench's
// generation test is tg128; 32 keeps a CPU run of a small model in seconds.
inline constexpr int64_t max_new_tokens = 32;

}  // namespace attnbench::defaults
