#include <catch2/catch.hpp>

#include "config/config_parser.hpp"
#include "runner/runner.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

const char* three_variants = R"({
  "name": "runner-test",
  "model": {"preset": "bert-tiny", "seed": 7},
  "workload": {"samples": 12, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 32, "seed": 1},
  "measure": {"warmup": 1, "repetitions": 3},
  "device": "cpu",
  "variants": [
    {"name": "baseline", "precision": "fp32", "attention": "naive", "batching": {"batch_size": 4, "padding": "max_length"}},
    {"name": "sdpa", "precision": "fp32", "attention": "sdpa", "batching": {"batch_size": 5, "padding": "longest"}},
    {"name": "amp", "precision": "amp-bf16", "attention": "sdpa"},
    {"name": "later", "pending": "needs the offload issue"}
  ],
  "baseline": "baseline",
  "output": {"dir": "unused"}
})";

}  // namespace

TEST_CASE("run_experiment measures every variant and checks it against the baseline", "[runner]") {
  const config cfg = attnbench::testing::parse_owned(three_variants, "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  const run_result& r = out.result;
  REQUIRE(r.variants.size() == 4);
  CHECK(r.repetitions == 3);
  CHECK(r.all_passed());
  const auto& base = r.variants[0];
  CHECK(base.is_baseline);
  CHECK(base.status == status_kind::pass);
  CHECK(base.throughput.samples.size() == 3);
  CHECK(base.speedup.geomean == Approx(1.0));
  CHECK(base.check.rel_l2 == 0);
  CHECK(base.batches == 3);
  CHECK(base.computed_tokens == 12 * 32);
  // Different batch sizes and padding reorder nothing: outputs are in sample order.
  const auto& sdpa = r.variants[1];
  CHECK(sdpa.status == status_kind::pass);
  CHECK(sdpa.check.rel_l2 <= 1e-5);
  CHECK(sdpa.batches == 3);  // 5 + 5 + 2
  CHECK(sdpa.real_tokens == base.real_tokens);
  CHECK(sdpa.computed_tokens < base.computed_tokens);
  CHECK(sdpa.sdpa_backend_used != "");
  CHECK(sdpa.latency_ms.p50 > 0);
  CHECK(sdpa.flops_per_pass < base.flops_per_pass);
  const auto& amp = r.variants[2];
  CHECK(amp.status == status_kind::pass);
  CHECK(amp.check.rel_l2 > 0);
  CHECK(amp.peak_memory_bytes > 0);
  CHECK(amp.peak_memory_method == "cpu-allocator-hook");
  const auto& later = r.variants[3];
  CHECK(later.status == status_kind::skipped);
  CHECK(later.reason == "needs the offload issue");
  CHECK(std::isnan(later.throughput.median));
  REQUIRE(out.outputs.count("sdpa") == 1);
  CHECK(out.outputs.at("sdpa").sizes() == torch::IntArrayRef({12, 2}));
  CHECK(r.model.weight_checksum.size() == 16);
}

TEST_CASE("a perturbed variant is caught as FAIL", "[runner]") {
  const config cfg = attnbench::testing::parse_owned(three_variants, "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  opts.perturb_variant = "sdpa";
  const run_outcome out = run_experiment(cfg, opts);
  CHECK_FALSE(out.result.all_passed());
  CHECK(out.result.variants[1].status == status_kind::fail);
  CHECK(out.result.variants[1].check.rel_l2 > 1e-2);
  CHECK(out.result.variants[2].status == status_kind::pass);
}

TEST_CASE("adaptive repetitions: the run records its rounds, why they stopped and every variant's width",
          "[runner][repetitions]") {
  auto doc = nlohmann::ordered_json::parse(three_variants);
  doc["measure"] = {
      {"warmup", 1}, {"min_repetitions", 3}, {"max_repetitions", 40}, {"target_rel_half_width", 0.5}};
  const config cfg = testing::parse(doc);
  REQUIRE(cfg.measure.adaptive);
  run_options opts;
  opts.measure_ceilings = false;
  const run_result r = run_experiment(cfg, opts).result;
  CHECK(r.repetition_mode == "adaptive");
  CHECK(r.target_rel_half_width == 0.5);
  CHECK(r.repetitions >= 3);
  CHECK(r.repetitions <= 40);
  CHECK((r.stop_reason == "target met" || r.stop_reason == "max_repetitions reached"));
  for (const auto& v : r.variants) {
    if (v.status == status_kind::skipped) {
      CHECK(v.repetition.rounds == 0);
      continue;
    }
    CHECK(v.repetition.rounds == r.repetitions);  // interleaved: every variant every round
    CHECK(v.repetition.throughput_rel_half_width >= 0);
    CHECK(v.repetition.noisy == !v.repetition.target_met);
    if (r.stop_reason == "target met") CHECK(v.repetition.target_met);
    if (v.is_baseline)
      CHECK(std::isnan(v.repetition.speedup_rel_half_width));
    else
      CHECK(std::isfinite(v.repetition.speedup_rel_half_width));
  }
}

TEST_CASE("adaptive repetitions out of rounds: every variant that missed the target is noisy",
          "[runner][repetitions]") {
  auto doc = nlohmann::ordered_json::parse(three_variants);
  // A target no CPU timing meets, and few rounds to try.
  doc["measure"] = {
      {"warmup", 0}, {"min_repetitions", 3}, {"max_repetitions", 4}, {"target_rel_half_width", 1e-9}};
  const config cfg = testing::parse(doc);
  run_options opts;
  opts.measure_ceilings = false;
  const run_result r = run_experiment(cfg, opts).result;
  CHECK(r.repetitions == 4);
  CHECK(r.stop_reason == "max_repetitions reached");
  for (const auto& v : r.variants)
    if (v.status != status_kind::skipped) CHECK(v.repetition.noisy);
}

TEST_CASE("fixed repetitions: no target, nobody noisy", "[runner][repetitions]") {
  const config cfg = attnbench::testing::parse_owned(three_variants, "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const run_result r = run_experiment(cfg, opts).result;
  CHECK(r.repetition_mode == "fixed");
  CHECK(r.stop_reason == "fixed repetitions");
  CHECK(std::isnan(r.target_rel_half_width));
  for (const auto& v : r.variants) CHECK(!v.repetition.noisy);
}
