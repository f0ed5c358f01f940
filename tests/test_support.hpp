// Shared helpers for tests that need a small model or config.
#pragma once

#include <string>
#include <vector>

#include "common/error.hpp"
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

// A config document parsed as on a machine without a GPU.
inline config parse(const nlohmann::ordered_json& doc) { return parse_config_text(doc.dump(), "", cpu_only()); }

// Every problem parsing `doc` reports; empty when it parses cleanly.
inline std::vector<problem> problems_of(const nlohmann::ordered_json& doc) {
  try {
    parse(doc);
  } catch (const input_error& e) {
    return e.problems();
  }
  return {};
}

}  // namespace attnbench::testing
