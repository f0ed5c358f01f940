#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "report/comparison.hpp"
#include "sample_result.hpp"

using namespace attnbench;
using testing::sample_result;
using testing::scaled;
using testing::with_throughput;

namespace {

const variant_comparison& named(const comparison& c, const std::string& name) {
  for (const auto& v : c.variants)
    if (v.name == name) return v;
  FAIL("no variant " << name);
  throw;  // unreachable: FAIL throws
}

}  // namespace

TEST_CASE("compare: identical runs are SAME, the skipped variant is skipped", "[report]") {
  const run_result r = sample_result();
  const comparison c = compare_runs(r, r, {}, "base.json", "new.json");
  CHECK(c.warnings.empty());
  REQUIRE(c.variants.size() == 3);
  const variant_comparison& base = named(c, "fp32-naive");
  CHECK(base.kind == pairing::compared);
  CHECK(base.outcome == verdict::same);
  CHECK(base.change == 0.0);
  CHECK(base.p_value == 1.0);          // every value tied across the two samples
  CHECK(base.method == "asymptotic");  // ties: the normal approximation
  CHECK(base.base.n == 5);
  CHECK(base.base.geomean == Approx(std::pow(41.20 * 41.85 * 40.97 * 41.52 * 41.33, 1.0 / 5)));
  CHECK(base.base.geomean_ci_low < base.base.geomean);
  CHECK(base.base.geomean_ci_high > base.base.geomean);
  const variant_comparison& skipped = named(c, "fp16-flash");
  CHECK(skipped.kind == pairing::skipped);
  CHECK_FALSE(skipped.has_verdict);
  CHECK_THAT(skipped.note, Catch::StartsWith("SKIPPED in BASE and NEW: flash backend needs a CUDA device"));
  CHECK_FALSE(c.regressed());
  CHECK(c.count(verdict::same) == 2);
  CHECK(c.count(pairing::skipped) == 1);
  CHECK(c.base.path == "base.json");
  CHECK(c.candidate.git_commit == "3f2a9c1");
}

TEST_CASE("compare: 20% slower over 5 repetitions each is SLOWER", "[report]") {
  const run_result base = sample_result();
  const run_result slow = with_throughput(base, 1, scaled(base.variants[1].throughput.samples, 0.8));
  const comparison c = compare_runs(base, slow, {});
  const variant_comparison& v = named(c, "bf16-sdpa");
  CHECK(v.outcome == verdict::slower);
  CHECK(v.change == Approx(-0.2));
  // The change is of the geometric means, its interval Welch's on the logs: it holds −20%.
  CHECK(v.change == Approx(v.candidate.geomean / v.base.geomean - 1).epsilon(1e-12));
  CHECK(v.change_ci_low < -0.2);
  CHECK(v.change_ci_high > -0.2);
  CHECK(v.change_ci_high < 0);
  CHECK(v.method == "exact");
  CHECK(v.u == 0);                                       // every NEW repetition below every BASE one
  CHECK(v.p_value == Approx(2.0 / 252).epsilon(1e-12));  // scipy: 0.007936507936507936
  CHECK(v.regression());
  CHECK(c.regressed());
  CHECK(c.regressions() == 1);
  CHECK(named(c, "fp32-naive").outcome == verdict::same);

  // The same change the other way is FASTER, and no regression.
  const comparison back = compare_runs(slow, base, {});
  CHECK(named(back, "bf16-sdpa").outcome == verdict::faster);
  CHECK_FALSE(back.regressed());
}

TEST_CASE("compare: significant but within the threshold is SAME", "[report]") {
  const run_result base = sample_result();
  const run_result slow = with_throughput(base, 1, scaled(base.variants[1].throughput.samples, 0.97));
  const comparison c = compare_runs(base, slow, {0.05, 0.05});
  const variant_comparison& v = named(c, "bf16-sdpa");
  CHECK(v.p_value < 0.05);
  CHECK(v.outcome == verdict::same);
  CHECK_THAT(v.note, Catch::Contains("within the 5% threshold"));
  // A lower threshold makes the same data SLOWER.
  CHECK(named(compare_runs(base, slow, {0.02, 0.05}), "bf16-sdpa").outcome == verdict::slower);
  // A large change that is not significant (overlapping samples) stays SAME.
  const run_result overlapping = with_throughput(base, 1, {60, 140, 70, 130, 98});
  // Held by name: a reference into a temporary comparison would dangle (found by ASan).
  const comparison overlapped = compare_runs(base, overlapping, {});
  const variant_comparison& o = named(overlapped, "bf16-sdpa");
  CHECK(o.p_value > 0.05);
  CHECK(o.outcome == verdict::same);
}

TEST_CASE("compare: too few repetitions to reach alpha is NOISY, not a regression", "[report]") {
  run_result base = sample_result();
  base = with_throughput(base, 1, {97.8, 99.1});
  const run_result slow = with_throughput(base, 1, {50.0, 51.0});  // halved, but n = 2 per side
  const comparison c = compare_runs(base, slow, {});
  const variant_comparison& v = named(c, "bf16-sdpa");
  CHECK(v.outcome == verdict::noisy);
  CHECK(v.min_p == Approx(1.0 / 3));
  CHECK(v.p_value == Approx(1.0 / 3));
  CHECK_THAT(v.note,
             Catch::Contains("smallest attainable p is 0.333") && Catch::Contains("at least 4 repetitions"));
  CHECK_FALSE(v.regression());
  CHECK_FALSE(c.regressed());
  // n = 3 per side: 0.1, still NOISY at 0.05 but decidable at alpha 0.2.
  const run_result b3 = with_throughput(base, 1, {97.8, 99.1, 96.5});
  const run_result n3 = with_throughput(base, 1, {50.0, 51.0, 49.0});
  CHECK(named(compare_runs(b3, n3, {}), "bf16-sdpa").outcome == verdict::noisy);
  CHECK(named(compare_runs(b3, n3, {0.05, 0.2}), "bf16-sdpa").outcome == verdict::slower);
  CHECK(repetitions_needed(0.05) == 4);
  CHECK(repetitions_needed(0.2) == 3);
  CHECK(repetitions_needed(0.01) == 5);
}

TEST_CASE("compare: a newly failing check is a regression, a fixed one is not", "[report]") {
  const run_result base = sample_result();
  run_result broken = base;
  broken.variants[1].status = status_kind::fail;
  broken.variants[1].check.status = status_kind::fail;
  broken.variants[1].check.rel_l2 = 0.5;
  const comparison c = compare_runs(base, broken, {});
  const variant_comparison& v = named(c, "bf16-sdpa");
  CHECK(v.newly_failing);
  CHECK(v.outcome == verdict::same);  // the speed did not change; the outputs did
  CHECK(v.regression());
  CHECK(v.base.rel_l2 == 3.42e-3);
  CHECK(v.candidate.rel_l2 == 0.5);
  CHECK(c.newly_failing() == 1);
  CHECK(c.regressed());
  // Failing in both is not new; failing in BASE only is a fix.
  CHECK_FALSE(compare_runs(broken, broken, {}).regressed());
  const comparison fixed = compare_runs(broken, base, {});
  CHECK(named(fixed, "bf16-sdpa").fixed);
  CHECK_FALSE(fixed.regressed());
}

TEST_CASE("compare: added and removed variants are listed, an added failing one counts", "[report]") {
  const run_result base = sample_result();
  run_result candidate = base;
  candidate.variants[1].name = "bf16-sdpa-v2";
  const comparison c = compare_runs(base, candidate, {});
  REQUIRE(c.variants.size() == 4);
  CHECK(c.variants[1].name == "bf16-sdpa-v2");
  CHECK(c.variants[1].kind == pairing::added);
  CHECK_FALSE(c.variants[1].base.present);
  CHECK(c.variants[3].name == "bf16-sdpa");  // only in BASE: after NEW's variants
  CHECK(c.variants[3].kind == pairing::removed);
  CHECK_FALSE(c.variants[3].candidate.present);
  CHECK_FALSE(c.regressed());
  candidate.variants[1].status = status_kind::fail;
  CHECK(compare_runs(base, candidate, {}).newly_failing() == 1);
}

TEST_CASE("compare: different model, workload, config or machine is a warning", "[report]") {
  const run_result base = sample_result();
  run_result other = base;
  CHECK(compare_runs(base, other, {}).warnings.empty());
  other.model.weight_checksum = "deadbeef";
  other.workload.samples = 128;
  other.workload.mean_length = 99.5;
  other.environment.config_hash = "0123";
  other.environment.device_name = "NVIDIA H200";
  other.environment.torch_version = "2.12.0";
  other.environment.git_commit = "another";  // the point of comparing: not a warning
  other.environment.date = "2026-01-01T00:00:00Z";
  const std::vector<std::string> w = compare_runs(base, other, {}).warnings;
  REQUIRE(w.size() == 6);
  CHECK(w[0] == "model.weight_checksum differs: BASE \"c0ffee12\", NEW \"deadbeef\"");
  CHECK(w[1] == "workload.samples differs: BASE 256, NEW 128");
  CHECK(w[2] == "workload.mean_length differs: BASE 137.15625, NEW 99.5");
  CHECK(w[3] ==
        "environment.config_hash differs: BASE \"" + base.environment.config_hash + "\", NEW \"0123\"");
  CHECK(w[4] == "environment.device_name differs: BASE \"AMD EPYC 7B13\", NEW \"NVIDIA H200\"");
  CHECK(w[5] == "environment.torch_version differs: BASE \"2.11.0\", NEW \"2.12.0\"");
}

TEST_CASE("compare: prompts from another tokenizer file are a warning", "[report][bpe]") {
  run_result base = sample_result();
  base.workload.tokenizer = "configs/data/handbook-bpe.json";
  base.workload.tokenizer_fnv1a64 = "ab68ee5b8ba7b2d3";
  run_result other = base;
  CHECK(compare_runs(base, other, {}).warnings.empty());
  other.workload.tokenizer_fnv1a64 = "0000000000000001";  // the same path, retrained
  const std::vector<std::string> w = compare_runs(base, other, {}).warnings;
  REQUIRE(w.size() == 1);
  CHECK(w[0] == "workload.tokenizer_fnv1a64 differs: BASE \"ab68ee5b8ba7b2d3\", NEW \"0000000000000001\"");
  other.workload.tokenizer_fnv1a64
      .clear();  // a file from before tokenizers were recorded: nothing to compare
  CHECK(compare_runs(base, other, {}).warnings.empty());
}

TEST_CASE("compare: two CPUs behind one model name are told apart", "[report][cpu]") {
  const run_result zen3 = sample_result();
  run_result zen4 = zen3;
  zen4.environment.cpu_id = "AuthenticAMD family 25 model 17 stepping 1";
  zen4.environment.cpu_features = {"avx2", "fma", "f16c", "avx512f", "avx512_bf16"};
  const std::vector<std::string> w = compare_runs(zen3, zen4, {}).warnings;
  REQUIRE(w.size() == 2);  // device_name says "AMD EPYC 7B13" on both
  CHECK(w[0] == "environment.cpu_id differs: BASE \"AuthenticAMD family 25 model 1 stepping 1\", NEW "
                "\"AuthenticAMD family 25 model 17 stepping 1\"");
  CHECK(w[1] == "environment.cpu_features differs: BASE \"avx2 fma f16c\", NEW \"avx2 fma f16c avx512f avx512_bf16\"");
  // A file written before these fields (empty) against one with them: unknown, and said so.
  run_result old = zen3;
  old.environment.cpu_id.clear();
  old.environment.cpu_features.clear();
  const std::vector<std::string> unknown = compare_runs(old, zen4, {}).warnings;
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0] == "environment.cpu_id: BASE does not record it (written before it was), NEW is \"AuthenticAMD "
                      "family 25 model 17 stepping 1\": whether the two ran on the same CPU is unknown; remake BASE on "
                      "this machine kind");
  // Both from before: nothing to compare.
  CHECK(compare_runs(old, old, {}).warnings.empty());
}

TEST_CASE("compare: names of verdicts and pairings", "[report]") {
  CHECK(to_string(verdict::same) == "SAME");
  CHECK(to_string(verdict::faster) == "FASTER");
  CHECK(to_string(verdict::slower) == "SLOWER");
  CHECK(to_string(verdict::noisy) == "NOISY");
  CHECK(to_string(pairing::compared) == "compared");
  CHECK(to_string(pairing::removed) == "removed");
}

TEST_CASE("compare: a verdict from data a run flagged noisy says so", "[report][repetitions]") {
  run_result base = sample_result();
  const run_result slow = with_throughput(base, 1, scaled(base.variants[1].throughput.samples, 0.8));
  REQUIRE(base.variants[1].repetition.noisy);  // the sample's bf16-sdpa missed its speedup target
  const comparison c = compare_runs(base, slow, {});
  const variant_comparison& v = named(c, "bf16-sdpa");
  CHECK(v.outcome == verdict::slower);
  CHECK(v.base.noisy);
  CHECK_THAT(v.note, Catch::Contains("BASE and NEW flagged noisy") &&
                         Catch::Contains("rests on noisier data than the run asked for"));
  CHECK(named(c, "fp32-naive").note.empty());  // met its target in both
}

namespace {

// The same run on a runner whose GEMMs are `factor` as fast: every ceiling and every throughput
// sample scaled alike, the code unchanged.
run_result on_other_runner(const run_result& r, double factor) {
  run_result out = r;
  for (auto& c : out.environment.ceilings) c.gflops *= factor;
  for (std::size_t i = 0; i < out.variants.size(); ++i)
    out = with_throughput(out, i, scaled(out.variants[i].throughput.samples, factor));
  return out;
}

}  // namespace

TEST_CASE("compare --normalize ceiling: a slower runner is not a regression, slower code still is",
          "[report][cpu]") {
  const run_result base = sample_result();
  compare_options normalized;
  normalized.normalize = normalization::ceiling;

  // A runner at half the GEMM rate (a Zen 3 against a Zen 4): raw, every variant is SLOWER.
  const run_result zen3 = on_other_runner(base, 0.5);
  const comparison raw = compare_runs(base, zen3, {});
  CHECK(named(raw, "bf16-sdpa").outcome == verdict::slower);
  CHECK(named(raw, "fp32-naive").outcome == verdict::slower);
  CHECK(raw.regressed());
  const comparison norm = compare_runs(base, zen3, normalized);
  for (const char* name : {"fp32-naive", "bf16-sdpa"}) {
    const variant_comparison& v = named(norm, name);
    CHECK(v.outcome == verdict::same);
    CHECK(v.change == Approx(0).margin(1e-12));
  }
  CHECK_FALSE(norm.regressed());
  // Each side is divided by its own run's ceiling of the variant's dtype.
  const variant_comparison& bf16 = named(norm, "bf16-sdpa");
  CHECK(bf16.base.compute_dtype == "bf16");
  CHECK(bf16.base.ceiling_gflops == Approx(1310.7));
  CHECK(bf16.candidate.ceiling_gflops == Approx(655.35));
  CHECK(named(norm, "fp32-naive").base.ceiling_gflops == Approx(812.4));
  CHECK(bf16.base.geomean == Approx(named(raw, "bf16-sdpa").base.geomean / 1310.7));

  // The same runner, 30% slower code in one variant: SLOWER either way.
  const run_result slower_code = with_throughput(base, 1, scaled(base.variants[1].throughput.samples, 0.7));
  CHECK(named(compare_runs(base, slower_code, normalized), "bf16-sdpa").outcome == verdict::slower);
  CHECK(named(compare_runs(base, slower_code, normalized), "fp32-naive").outcome == verdict::same);

  // A run that measured no bf16 ceiling: that pair gets no verdict, and says why.
  run_result no_bf16 = base;
  no_bf16.environment.ceilings = {{"fp32", 2048, 812.4}};
  const comparison partial = compare_runs(base, no_bf16, normalized);
  CHECK(named(partial, "bf16-sdpa").outcome == verdict::noisy);
  CHECK(named(partial, "bf16-sdpa").note == "cannot normalise: NEW measured no bf16 matmul ceiling");
  CHECK(named(partial, "fp32-naive").outcome == verdict::same);
  CHECK(to_string(normalization::ceiling) == "ceiling");
  CHECK(to_string(normalization::none) == "none");
}

TEST_CASE("compare: core counts, caches and GPUs that differ are warned about", "[report][cpu]") {
  run_result a = sample_result(), b = sample_result();
  a.environment.cpu_count = 2;
  b.environment.cpu_count = 4;
  a.environment.cpu_caches = "L1d 32K, L1i 32K, L2 512K, L3 32768K";
  b.environment.cpu_caches = "L1d 32K, L1i 32K, L2 1024K, L3 32768K";
  b.environment.gpu_capability = "9.0";
  const std::vector<std::string> w = compare_runs(a, b, {}).warnings;
  REQUIRE(w.size() == 3);
  CHECK(w[0] == "environment.cpu_count differs: BASE 2, NEW 4");
  CHECK_THAT(w[1], Catch::StartsWith("environment.cpu_caches differs"));
  CHECK(w[2] == "environment.gpu_capability differs: BASE \"\", NEW \"9.0\"");
  // Unknown on one side (a file written before them): no warning.
  b = a;
  b.environment.cpu_count = 0;
  b.environment.cpu_caches.clear();
  CHECK(compare_runs(a, b, {}).warnings.empty());
}
