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
  const config cfg = parse_config_text(three_variants, "", testing::cpu_only());
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
  const config cfg = parse_config_text(three_variants, "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  opts.perturb_variant = "sdpa";
  const run_outcome out = run_experiment(cfg, opts);
  CHECK_FALSE(out.result.all_passed());
  CHECK(out.result.variants[1].status == status_kind::fail);
  CHECK(out.result.variants[1].check.rel_l2 > 1e-2);
  CHECK(out.result.variants[2].status == status_kind::pass);
}
