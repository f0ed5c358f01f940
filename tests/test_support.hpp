// Shared helpers for tests that need a small model or config.
#pragma once

#include <string>

#include "config/config.hpp"
#include "config/config_parser.hpp"

namespace attnbench::testing {

// bert-tiny with everything explicit, so tests do not depend on preset tables.
inline model_config tiny_model(bool causal = false) {
  model_config m;
  m.preset = "bert-tiny";
  m.layers = 2;
  m.hidden = 128;
  m.heads = 2;
  m.ffn = 512;
  m.vocab_size = 30522;
  m.max_positions = 512;
  m.type_vocab_size = 2;
  m.num_labels = 3;
  m.layer_norm_eps = 1e-12;
  m.causal = causal;
  m.seed = 42;
  return m;
}

inline device_caps cpu_only() { return device_caps{0, true}; }

}  // namespace attnbench::testing
