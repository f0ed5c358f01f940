// The float64 study that may excuse a decoder's changed token (runner/generation_study.hpp): its
// reference is the baseline's model in float64 (its margins are the fp32 model's to fp32's
// accuracy), a decision far outside the precision's noise is never excused, a wider grid moves
// the margins further than a narrower one, and a study over its memory budget (the host's
// available memory, or check.study_max_memory) does not run, with the reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "common/host_memory.hpp"
#include "model/decoder.hpp"
#include "runner/generation_study.hpp"
#include "runner/memory_tracker.hpp"
#include "test_support.hpp"

using namespace attnbench;

TEST_CASE("generation study: the rule's noise is the largest shift of the margin", "[decoder][check][study]") {
  CHECK(margin_noise(0.5, {0.4, 0.7, 0.45}) == Approx(0.2));
  CHECK(margin_noise(0.5, {}) == 0);
  CHECK(margin_noise(-0.1, {-0.1}) == 0);
}

TEST_CASE("generation study: float64 margins, decisions inside and outside the noise", "[decoder][check][study]") {
  torch::NoGradGuard no_grad;
  DecoderLM model = testing::seeded_tiny_decoder(model_family::llama, 5);
  const std::vector<std::vector<int64_t>> prompts = {{3, 17, 250, 9, 41, 8}, {100, 2, 77}};
  const generation g = generate_greedy(model, torch::tensor(prompts[0], torch::kLong).unsqueeze(0), 4, torch::kFloat);
  const generation g1 = generate_greedy(model, torch::tensor(prompts[1], torch::kLong).unsqueeze(0), 4, torch::kFloat);
  const auto tokens = torch::cat({g.tokens, g1.tokens}, 0);  // (2, 4): the baseline's
  // At step 2 of sequence 0: the runner-up (a near decision) and the last-ranked token (a far one),
  // from the fp32 model's own teacher-forced logits.
  const auto fp32 = teacher_forced_logits(model, torch::tensor(prompts[0], torch::kLong).unsqueeze(0),
                                          tokens[0].unsqueeze(0), torch::kFloat)[0][2];
  const auto order = fp32.argsort(-1, /*descending=*/true);
  const int64_t a = order[0].item<int64_t>(), second = order[1].item<int64_t>(), last = order[-1].item<int64_t>();
  REQUIRE(a == tokens[0][2].item<int64_t>());
  const std::vector<generation_decision> decisions = {{0, 2, a, second, true}, {0, 2, a, last, true},
                                                      {1, 0, tokens[1][0].item<int64_t>(), second, false}};
  const generation_study f = run_generation_study(model, prompts, tokens, "fp32", decisions, 8);
  const generation_study b = run_generation_study(model, prompts, tokens, "bf16", decisions, 8);
  const generation_study w = run_generation_study(model, prompts, tokens, "int8-weight-only", decisions, 8);
  REQUIRE(f.unavailable.empty());
  REQUIRE(f.margin.size() == 3);
  CHECK(f.precision_class == "fp32");
  CHECK(b.precision_class == "bf16");
  CHECK(w.precision_class == "int8-weight-only");
  CHECK(f.runs == 8);
  // The reference is the model in float64: its margins are the fp32 model's to fp32's accuracy.
  CHECK(f.margin[0] == Approx((fp32[a] - fp32[second]).item<double>()).margin(1e-4));
  CHECK(f.margin[1] == Approx((fp32[a] - fp32[last]).item<double>()).margin(1e-4));
  CHECK(b.margin == f.margin);  // the reference does not depend on the class
  // fp32's rounding moves a margin, by far less than bf16's.
  for (std::size_t j = 0; j < decisions.size(); ++j) {
    INFO("decision " << j);
    CHECK(f.noise[j] > 0);
    CHECK(f.noise[j] < 1e-4);
    CHECK(b.noise[j] > 100 * f.noise[j]);
    CHECK(w.noise[j] > f.noise[j]);
  }
  // The last-ranked token is never within any class's noise; a decision is excused exactly when
  // its margin is within its noise.
  CHECK_FALSE(f.excused[1]);
  CHECK_FALSE(b.excused[1]);
  CHECK_FALSE(w.excused[1]);
  for (const generation_study* st : {&f, &b, &w})
    for (std::size_t j = 0; j < decisions.size(); ++j) CHECK(st->excused[j] == (st->margin[j] <= st->noise[j]));
  // The same seeds give the same study.
  const generation_study again = run_generation_study(model, prompts, tokens, "bf16", decisions, 8);
  CHECK(again.noise == b.noise);
}

TEST_CASE("generation study: a model too large for its budget gets none, with the reason",
          "[decoder][check][study]") {
  DecoderLM model = testing::seeded_tiny_decoder(model_family::llama, 5);
  const auto tokens = torch::zeros({1, 2}, torch::kLong);
  const generation_study st = run_generation_study(model, {{1, 2, 3}}, tokens, "bf16", {{0, 0, 0, 1, true}}, 8,
                                                   /*max_memory=*/1024);
  CHECK_THAT(st.unavailable, Catch::StartsWith("no float64 study: it would take about "));
  CHECK_THAT(st.unavailable, Catch::Contains("a float64 copy of the "));
  CHECK_THAT(st.unavailable, Catch::Contains("over its budget of 9.54e-07 GiB, set by check.study_max_memory"));
  CHECK(st.studied == std::vector<bool>{false});
  CHECK(st.excused == std::vector<bool>{false});
  // 0 turns the study off, and says so.
  CHECK_THAT(run_generation_study(model, {{1, 2, 3}}, tokens, "bf16", {{0, 0, 0, 1, true}}, 8, 0).unavailable,
             Catch::StartsWith("no float64 study: check.study_max_memory is 0, which turns it off"));
  CHECK(run_generation_study(model, {{1, 2, 3}}, tokens, "bf16", {{0, 0, 0, 1, true}}, 8, int64_t{1} << 30)
            .unavailable.empty());
}

TEST_CASE("generation study: a sequence already studied is judged even when the others are over the budget",
          "[decoder][check][study]") {
  torch::NoGradGuard no_grad;
  DecoderLM model = testing::seeded_tiny_decoder(model_family::llama, 5);
  const std::vector<std::vector<int64_t>> prompts = {{3, 17, 250, 9, 41, 8}, {100, 2, 77}};
  const auto tokens = torch::tensor({1, 2, 3, 4, 5, 6, 7, 8}, torch::kLong).view({2, 4});
  // The budget holds sequence 1 (7 tokens) alone, not sequence 0 (10 tokens).
  const int64_t budget = generation_study_bytes(model, "bf16", 3 + 4, 4, 1, 8);
  REQUIRE(generation_study_bytes(model, "bf16", 6 + 4, 4, 1, 8) > budget);
  generation_evidence evidence(model, prompts, tokens, 8, budget);
  const generation_study first = evidence.study("bf16", {{1, 0, 5, 9, true}});
  REQUIRE(first.unavailable.empty());
  REQUIRE(first.studied == std::vector<bool>{true});
  // A later variant changes the same decision and one in sequence 0: the first is judged from the
  // cache, as before; the second is not studied, and says why.
  const generation_study later = evidence.study("bf16", {{1, 0, 5, 9, true}, {0, 1, 2, 7, true}});
  CHECK_THAT(later.unavailable, Catch::Contains("over its budget"));
  CHECK_THAT(later.unavailable, Catch::Contains("1 sequence(s) of up to 10 tokens"));
  REQUIRE(later.studied == std::vector<bool>{true, false});
  CHECK(later.margin[0] == first.margin[0]);
  CHECK(later.noise[0] == first.noise[0]);
  CHECK(later.excused[0] == first.excused[0]);
  CHECK(std::isnan(later.margin[1]));
  CHECK_FALSE(later.excused[1]);
  // Another grid has no cache: nothing of it is studied.
  const generation_study other = evidence.study("int8", {{1, 0, 5, 9, true}});
  CHECK(other.studied == std::vector<bool>{false});
}

TEST_CASE("generation study: its estimate bounds what it allocates", "[decoder][check][study]") {
  // Long prompts and one new token each: the logits the study keeps must be the new rows only (a
  // view of every position's would keep them all), and each grid's rounding must fit its allowance.
  DecoderLM model = testing::seeded_tiny_decoder(model_family::llama, 5);
  const int64_t sequences = 3, prompt = 120, fresh_new = 1;
  std::vector<std::vector<int64_t>> prompts;
  std::vector<generation_decision> decisions;
  for (int64_t s = 0; s < sequences; ++s) {
    std::vector<int64_t> ids;
    for (int64_t t = 0; t < prompt; ++t) ids.push_back((7 * t + 3 * s + 1) % 512);
    prompts.push_back(ids);
    decisions.push_back({s, 0, 1, 2, true});
  }
  const auto tokens = torch::ones({sequences, fresh_new}, torch::kLong);
  for (const char* label : {"bf16", "int8", "int8-weight-only"}) {
    INFO(label);
    generation_evidence evidence(model, prompts, tokens, 8, int64_t{1} << 30);
    int64_t peak = 0;
    {
      const peak_memory_scope scope(torch::kCPU);
      const generation_study st = evidence.study(label, decisions);
      REQUIRE(st.unavailable.empty());
      peak = scope.peak_bytes();
    }
    const int64_t estimate = generation_study_bytes(model, label, prompt + fresh_new, fresh_new, sequences, 8);
    CHECK(peak > 0);
    CHECK(peak <= estimate);
  }
}

TEST_CASE("generation study: its memory estimate and budget", "[decoder][check][study]") {
  DecoderLM model = testing::seeded_tiny_decoder(model_family::llama, 5);
  int64_t parameters = 0, largest = 0;
  for (const auto& p : model->parameters()) {
    parameters += p.numel();
    largest = std::max<int64_t>(largest, p.numel());
  }
  const decoder_dims& d = model->dims();
  const int64_t one = generation_study_bytes(model, "bf16", 10, 4, 1, 8);
  // The float64 copy and the largest parameter's rounding, at least; more for a longer sequence, for
  // each sequence whose K + 1 logits are kept, and on int8's grid (float temporaries) than bf16's.
  CHECK(one >= 8 * parameters + 16 * largest + 8 * 4 * 10 * d.vocab);
  CHECK(generation_study_bytes(model, "bf16", 20, 4, 1, 8) > one);
  CHECK(generation_study_bytes(model, "bf16", 10, 4, 2, 8) - one == 8 * 9 * 4 * d.vocab);
  CHECK(generation_study_bytes(model, "int8", 10, 4, 1, 8) > one);
  CHECK(generation_study_bytes(model, "int8-weight-only", 10, 4, 1, 8) ==
        generation_study_bytes(model, "int8", 10, 4, 1, 8));
  // The budget: a setting is taken as it is; by default the available memory less the reserve, never
  // below 0, and the fallback where MemAvailable is unknown.
  CHECK(study_budget_of(123, int64_t{1} << 40).bytes == 123);
  CHECK(study_budget_of(123, std::nullopt).source == "set by check.study_max_memory");
  const int64_t gib = int64_t{1} << 30;
  const study_budget host = study_budget_of(study_memory_auto, 10 * gib);
  CHECK(host.bytes == 10 * gib - study_memory_reserve);
  CHECK_THAT(host.source, Catch::StartsWith("the 10 GiB available now (MemAvailable) less a 1 GiB reserve"));
  CHECK(study_budget_of(study_memory_auto, gib / 2).bytes == 0);
  CHECK(study_budget_of(study_memory_auto, std::nullopt).bytes == study_memory_fallback);
}

TEST_CASE("host memory: MemAvailable from /proc/meminfo's text", "[common]") {
  CHECK(parse_mem_available("MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   "
                            "16000000 kB\n") == int64_t{16000000} * 1024);
  CHECK_FALSE(parse_mem_available("MemTotal:       24000000 kB\nMemFree:         1000 kB\n").has_value());
  CHECK_FALSE(parse_mem_available("MemAvailable: lots kB\n").has_value());
  CHECK_FALSE(parse_mem_available("MemAvailable: 12 MB\n").has_value());
  const auto here = host_memory_available();
  REQUIRE(here.has_value());  // every Linux since 3.14 has the line
  CHECK(*here > 0);
}
