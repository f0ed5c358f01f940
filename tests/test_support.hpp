// Shared helpers for tests that need a small model or config.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "config/config.hpp"
#include "config/config_parser.hpp"
#include "model/decoder.hpp"
#include "runner/config_checks.hpp"

namespace attnbench::testing {

// Skips the running test, saying why; the caller returns from the test right after. Under CTest
// the discovered tests' ENVIRONMENT sets ATTNBENCH_SKIP_RETURN_CODE to the code their
// SKIP_RETURN_CODE names (tests/CMakeLists.txt): this prints "SKIPPED: <reason>" and ends the
// process with that code, so CTest reports a skip because of the exit code alone, never because
// of text in the output. catch_discover_tests runs one test case per process, so ending it cuts
// nothing else short. Run outside CTest (the binary running every test) it only warns.
// Call it before the test asserts anything: under CTest a failure before it would be lost.
inline void skip_test(const std::string& reason) {
  const std::string line = "SKIPPED: " + reason;
  const char* code = std::getenv("ATTNBENCH_SKIP_RETURN_CODE");
  const int exit_code = code ? std::atoi(code) : 0;
  if (exit_code > 0 && exit_code < 256) {
    std::cout << line << std::endl;
    std::fflush(stdout);
    std::_Exit(exit_code);
  }
  WARN(line);
}

// Why a [gpu] test skips.
inline const char* no_gpu = "no CUDA device on this machine; [gpu] tests need one";

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

// A two-layer decoder of either family (GPT-2 or Llama, with grouped-query attention), everything
// explicit; random weights come from init_weights(seed).
inline model_config tiny_decoder(model_family family) {
  model_config m;
  m.family = family;
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = family == model_family::llama ? 2 : 4;
  m.ffn = family == model_family::llama ? 176 : 256;
  m.vocab_size = 512;
  m.max_positions = 128;
  m.layer_norm_eps = family == model_family::gpt2 ? 1e-5 : 1e-6;
  m.rope_theta = 10000;
  m.causal = true;
  return m;
}

// tiny_decoder(family) built, with random weights from init_weights(seed), in eval mode.
inline DecoderLM seeded_tiny_decoder(model_family family, uint64_t seed) {
  DecoderLM model(tiny_decoder(family));
  model->init_weights(seed);
  model->eval();
  return model;
}

inline device_caps cpu_only() { return device_caps{0, true}; }

// A config's text as every command takes it: parsed, then checked by the layers that own its
// kernels and weights (runner/config_checks.hpp).
inline config parse_owned(const std::string& text, const std::string& source_path, const device_caps& caps) {
  config cfg = parse_config_text(text, source_path, caps);
  check_owned(cfg, caps);
  return cfg;
}
inline std::vector<config> sweep_points_owned(const config& base, const std::vector<sweep_point>& points,
                                              const device_caps& caps) {
  return checked_sweep_points(base, points, caps);
}

// A config document parsed as on a machine without a GPU.
inline config parse(const nlohmann::ordered_json& doc) { return parse_owned(doc.dump(), "", cpu_only()); }

// Every problem parsing `doc` reports; empty when it parses cleanly.
inline std::vector<problem> problems_of(const nlohmann::ordered_json& doc) {
  try {
    parse(doc);
  } catch (const input_error& e) {
    return e.problems();
  }
  return {};
}

// The message of the problem parsing `doc` reports at `path`; fails the test when there is none.
inline std::string problem_at(const nlohmann::ordered_json& doc, const std::string& path) {
  const auto ps = problems_of(doc);
  INFO("problems: " << (ps.empty() ? std::string("none") : input_error(ps).what()));
  for (const auto& p : ps)
    if (p.path == path) return p.message;
  FAIL("no problem at " << path);
  return {};
}

}  // namespace attnbench::testing
