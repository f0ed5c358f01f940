// Continuous batching (runner/generate_engine.hpp): sequences of different lengths that join at
// step boundaries generate exactly the tokens each prompt generates alone, step_rows gives the
// logits a sequence's own cached decode gives, admission keeps to its slots and KV budget, and
// static batching admits only between batches.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "model/decoder.hpp"
#include "runner/generate_engine.hpp"
#include "tensor_support.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

dataset prompts(const std::vector<int64_t>& lengths) {
  dataset d;
  int64_t next = 3;
  for (int64_t len : lengths) {
    std::vector<int64_t> p;
    for (int64_t k = 0; k < len; ++k) p.push_back((next = (next * 37 + 11) % 509) + 1);
    d.samples.push_back(p);
  }
  return d;
}

}  // namespace

TEST_CASE("continuous batching: rows of any length step together and generate each prompt's own tokens",
          "[runner][decoder][engine]") {
  torch::NoGradGuard no_grad;
  const auto family = GENERATE(model_family::gpt2, model_family::llama);
  INFO(to_string(family));
  DecoderLM model = testing::seeded_tiny_decoder(family, 7);
  const dataset data = prompts({5, 9, 3, 12, 7, 4});
  constexpr int64_t new_tokens = 6;

  // step_rows over three caches at different lengths = each one's own forward_last.
  {
    std::vector<kv_cache> own, rows;
    std::vector<int64_t> last;
    for (int s = 0; s < 3; ++s) {
      const auto& p = data.samples[static_cast<std::size_t>(s)];
      const auto ids = torch::tensor(p, torch::kLong).view({1, -1});
      own.push_back(make_kv_cache(model->dims(), 1, 32, torch::kFloat, torch::kCPU));
      rows.push_back(make_kv_cache(model->dims(), 1, 32, torch::kFloat, torch::kCPU));
      last.push_back(model->forward_last(ids, own.back()).argmax(-1).item<int64_t>());
      model->forward_last(ids, rows.back());
    }
    std::vector<kv_cache*> ptrs{&rows[0], &rows[1], &rows[2]};
    const auto batched = model->step_rows(torch::tensor(last, torch::kLong).view({3, 1}), ptrs);
    for (int s = 0; s < 3; ++s) {
      const auto alone = model->forward_last(torch::tensor({last[static_cast<std::size_t>(s)]}, torch::kLong).view({1, 1}),
                                             own[static_cast<std::size_t>(s)]);
      CHECK(testing::rel_l2(batched[s], alone[0]) < 1e-5);
      CHECK(rows[static_cast<std::size_t>(s)].length == own[static_cast<std::size_t>(s)].length);
    }
  }

  // Each prompt alone, batch 1: the reference tokens.
  std::vector<torch::Tensor> alone;
  for (const auto& p : data.samples)
    alone.push_back(generate_greedy(model, torch::tensor(p, torch::kLong).view({1, -1}), new_tokens, torch::kFloat)
                        .tokens[0]);
  const auto serve = [&](generation_engine::settings s) {
    s.new_tokens = new_tokens;
    double now = 0;
    generation_engine engine(model, data, torch::kCPU, s, [&now] { return now += 1e-3; });
    std::vector<generation_request> requests;
    for (int64_t i = 0; i < static_cast<int64_t>(data.samples.size()); ++i) requests.push_back({i, i, 0.0});
    auto done = generate_all(engine, requests);
    REQUIRE(done.size() == data.samples.size());
    for (const auto& g : done) {
      INFO("sample " << g.sample);
      CHECK(torch::equal(g.tokens, alone[static_cast<std::size_t>(g.sample)]));
      CHECK(g.token_s.size() == new_tokens);
    }
    return engine.totals;
  };
  generation_engine::settings continuous;
  continuous.slots = 3;
  const engine_totals c = serve(continuous);
  CHECK(c.peak_active == 3);
  CHECK(c.decode_tokens == 6 * (new_tokens - 1));
  CHECK(c.prefill_tokens == 5 + 9 + 3 + 12 + 7 + 4);
  // Continuous: a sequence joins as one retires, so the steps are fewer than three static batches' 3 × 5.
  CHECK(c.steps < 3 * (new_tokens - 1) + 1);
  CHECK(c.fill_sum / static_cast<double>(c.steps) > 0);
  CHECK(c.fill_sum / static_cast<double>(c.steps) <= 1);

  generation_engine::settings batches;
  batches.slots = 2;
  batches.continuous = false;
  const engine_totals st = serve(batches);
  CHECK(st.steps == 3 * (new_tokens - 1));  // three batches of two, each to its end
  CHECK(st.peak_active == 2);

  // A KV budget of 24 positions: the caches (prompt + 6: 11, 15, 9, 18, 13, 10) fit two at a time
  // at most, and the tokens stay each prompt's own.
  generation_engine::settings budget = continuous;
  budget.max_cache_tokens = 24;
  const engine_totals b = serve(budget);
  CHECK(b.peak_cache_bytes <= 24 * make_kv_cache(model->dims(), 1, 1, torch::kFloat, torch::kCPU).bytes());
  CHECK(b.peak_active == 2);

  // A request whose cache alone is past the budget is refused, naming it.
  generation_engine::settings small = continuous;
  small.max_cache_tokens = 10;
  small.new_tokens = new_tokens;
  generation_engine refusing(model, data, torch::kCPU, small, [] { return 0.0; });
  CHECK_THROWS_WITH(refusing.admit({3, 3, 0.0}), Catch::Contains("needs a KV cache of 18 positions") &&
                                                     Catch::Contains("batching.max_tokens is 10"));
}
