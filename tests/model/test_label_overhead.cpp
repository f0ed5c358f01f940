// Hidden measurement (not part of the suite: the [.] tag): what the model's labelled regions cost
// when the profiler is off. Run it on an idle machine:
//
//   build/tests/attnbench_tests "[label-overhead]" -s
//
// It prints (1) the cost of one RECORD_USER_SCOPE with no profiler, from a tight loop; (2) how
// many labels one forward pass enters, counted by the profiler itself; (3) their estimated share
// of a forward pass; (4) an A/B of the forward pass with RecordFunction enabled and disabled
// (at::RecordFunctionGuard(false) turns every RecordFunction off, LibTorch's own per-operator
// ones included, so it bounds the labels' cost from above).
#include <catch2/catch.hpp>

#include <chrono>
#include <iostream>

#include <ATen/record_function.h>
#include <fmt/format.h>

#include "model/encoder.hpp"
#include "profile/kineto_session.hpp"
#include "stats/summary.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

using clock_type = std::chrono::steady_clock;

double forward_ms(EncoderClassifier& model, const torch::Tensor& ids, bool record_function) {
  at::RecordFunctionGuard guard(record_function);
  const auto t0 = clock_type::now();
  model->forward(ids, torch::Tensor());
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

}  // namespace

TEST_CASE("label overhead with the profiler off", "[.][label-overhead]") {
  constexpr int64_t loop = 2'000'000;  // long enough for a stable ns/label
  constexpr int rounds = 30;           // interleaved A/B forward passes
  torch::InferenceMode inference;
  model_config m = testing::tiny_model();
  m.preset = "minilm-l6";
  m.layers = 6;
  m.hidden = 384;
  m.heads = 12;
  m.ffn = 1536;
  EncoderClassifier model(m);
  model->init_weights(0);
  model->eval();
  const auto ids = torch::randint(1000, 2000, {1, 128}, torch::kLong);

  // (1) one label, profiler off
  const auto t0 = clock_type::now();
  for (int64_t i = 0; i < loop; ++i) {
    RECORD_USER_SCOPE("attention.softmax");
  }
  const double ns_per_label = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / loop;

  // (2) labels per forward, naive attention (the most labelled path)
  model->set_attention({attention_kind::naive, sdpa_backend::auto_select, false, {}});
  profile_config pc;
  kineto_session session(pc, false);
  session.prepare();
  session.enable();
  model->forward(ids, torch::Tensor());
  const auto cycle = session.disable();
  int64_t labels = 0;
  for (const auto& e : cycle.events) labels += e.kind == event_kind::region;
  // embeddings; per layer: the layer, qkv_proj, scores, mask, softmax, dropout, context, out_proj,
  // ffn, layernorm twice; pooler, classifier
  REQUIRE(labels == 1 + 6 * 11 + 2);

  // (3), (4)
  for (int w = 0; w < 3; ++w) forward_ms(model, ids, true);
  std::vector<double> on, off;
  for (int r = 0; r < rounds; ++r) {
    on.push_back(forward_ms(model, ids, true));
    off.push_back(forward_ms(model, ids, false));
  }
  const double fwd = median(on);
  std::cout << fmt::format(
      "one label, profiler off: {:.1f} ns\nlabels per forward (minilm-l6 shape, naive, B=1 S=128): {}\n"
      "forward median: {:.3f} ms with RecordFunction on, {:.3f} ms off ({:+.2f}%)\n"
      "labels' estimated share of a forward: {:.4f}%\n",
      ns_per_label, labels, fwd, median(off), 100.0 * (fwd / median(off) - 1),
      100.0 * ns_per_label * static_cast<double>(labels) / (fwd * 1e6));
}
