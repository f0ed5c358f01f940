// The attention microbenchmark: validation before timing (a planted wrong implementation is
// caught and never timed), the memory cap, speedups and FLOP rates.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/attention_impls.hpp"
#include "runner/attention_bench.hpp"

using namespace attnbench;

namespace {

attention_bench_options small(std::vector<std::string> impls) {
  attention_bench_options o;
  o.grid = {{1}, {2}, {32}, {16}, {false, true}, {"fp32"}};
  o.impls = std::move(impls);
  o.warmup = 0;
  o.repetitions = 2;
  return o;
}

// Registers an implementation for one test and removes it after.
struct planted {
  std::string name;
  planted(
      std::string n,
      std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, bool)> f)
      : name(std::move(n)) {
    attention_impl impl;
    impl.name = name;
    impl.unavailable = [](torch::Device) -> std::optional<std::string> { return std::nullopt; };
    impl.run = [f = std::move(f)](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                  const torch::Tensor&) { return f(q, k, v, causal); };
    register_attention_impl(impl);
  }
  ~planted() { unregister_attention_impl(name); }
};

const attention_row& row_of(const std::vector<attention_row>& rows, const std::string& impl, bool causal) {
  for (const auto& r : rows)
    if (r.impl == impl && r.point.causal == causal) return r;
  FAIL("no row for " << impl);
  return rows.front();
}

}  // namespace

TEST_CASE("attention bench: correct implementations pass and are timed", "[runner]") {
  const auto rows = run_attention_bench(small({"naive", "sdpa-math", "sdpa-flash", "sdpa-efficient"}));
  REQUIRE(rows.size() == 8);  // 2 points × 4 implementations
  for (bool causal : {false, true}) {
    for (const char* name : {"naive", "sdpa-math", "sdpa-flash"}) {
      const auto& r = row_of(rows, name, causal);
      INFO(name << " causal=" << causal << ": " << r.reason);
      CHECK(r.status == attention_status::ok);
      CHECK(r.rel_l2 < attention_tolerance_fp32);
      CHECK(r.repetitions == 2);
      CHECK(r.median_ms > 0);
      CHECK(r.tflops == Approx(attention_flops(r.point) / (r.median_ms / 1e3) / 1e12));
      CHECK(r.peak_bytes >= 0);
    }
    CHECK(row_of(rows, "naive", causal).speedup == Approx(1.0));
    const auto& eff = row_of(rows, "sdpa-efficient", causal);
    CHECK(eff.status == attention_status::unsupported);
    CHECK_THAT(eff.reason, Catch::Contains("CUDA only"));
  }
}

TEST_CASE("attention bench: a planted wrong implementation fails validation and is not timed", "[runner]") {
  // Forgets the 1/√d scale: plausible-looking output, wrong numbers.
  const planted unscaled("planted-unscaled", [](const torch::Tensor& q, const torch::Tensor& k,
                                                const torch::Tensor& v, bool causal) {
    auto s = torch::matmul(q, k.transpose(-2, -1));
    if (causal) s = s.masked_fill(torch::ones({q.size(2), q.size(2)}, torch::kBool).triu(1), -INFINITY);
    return torch::matmul(torch::softmax(s, -1), v);
  });
  const planted nan("planted-nan", [](const torch::Tensor& q, const torch::Tensor&, const torch::Tensor&,
                                      bool) { return torch::full_like(q, std::nan("")); });
  const auto rows = run_attention_bench(small({"naive", "planted-unscaled", "planted-nan"}));
  for (bool causal : {false, true})
    for (const char* name : {"planted-unscaled", "planted-nan"}) {
      const auto& r = row_of(rows, name, causal);
      INFO(name);
      CHECK(r.status == attention_status::fail);
      CHECK_FALSE(r.rel_l2 <= r.tolerance);
      CHECK(r.repetitions == 0);
      CHECK(std::isnan(r.median_ms));
      CHECK(std::isnan(r.speedup));
      CHECK_THAT(r.reason, Catch::Contains("not timed"));
    }
  CHECK(row_of(rows, "naive", false).status == attention_status::ok);
}

TEST_CASE("attention bench: over the memory cap naive is OOM, not run, and fused SDPA still runs",
          "[runner]") {
  auto o = small({"naive", "sdpa-flash"});
  o.grid.causal = {false};
  o.grid.seq = {64};
  o.memory_cap_bytes = 2 * 1 * 2 * 64 * 64 * 4 - 1;  // one byte short of naive's scores + probabilities
  const auto rows = run_attention_bench(o);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].status == attention_status::oom);
  CHECK_THAT(rows[0].reason, Catch::Contains("--memory-cap"));
  CHECK(std::isnan(rows[0].rel_l2));
  CHECK(rows[1].status == attention_status::ok);
  CHECK(std::isnan(rows[1].speedup));  // no naive time at this point
}

TEST_CASE("attention bench: grid points are the cartesian product, seq innermost", "[runner]") {
  const attention_grid g{{1, 2}, {4}, {16, 32, 64}, {8}, {false, true}, {"fp32", "bf16"}};
  const auto points = grid_points(g);
  REQUIRE(points.size() == 2 * 3 * 2 * 2);
  CHECK(points[0].seq == 16);
  CHECK(points[1].seq == 32);
  CHECK(points[2].seq == 64);
  CHECK(points[3].batch == 2);
  CHECK(points.back().dtype == "bf16");
  CHECK(points.back().causal);
}

TEST_CASE("attention bench: bf16 inputs are validated with the bf16 tolerance", "[runner]") {
  auto o = small({"naive", "sdpa-flash"});
  o.grid.dtype = {"bf16"};
  o.grid.causal = {false};
  const auto rows = run_attention_bench(o);
  for (const auto& r : rows) {
    INFO(r.impl << ": " << r.reason);
    CHECK(r.status == attention_status::ok);
    CHECK(r.tolerance == attention_tolerance_bf16);
    CHECK(r.rel_l2 > attention_tolerance_fp32);  // bf16 arithmetic really is less exact
  }
}

// Issue 30: on CUDA a timed sample is N back-to-back calls between two events; N from one call.
TEST_CASE("attention bench: calls per timed sample fill the target, within [1, max]", "[runner]") {
  CHECK(calls_per_sample(0.01, 2.0, 200) == 200);  // 10 µs calls: capped at 200
  CHECK(calls_per_sample(0.05, 2.0, 200) == 40);   // 50 µs: 40 calls make 2 ms
  CHECK(calls_per_sample(0.3, 2.0, 200) == 7);     // rounds up: ⌈6.67⌉
  CHECK(calls_per_sample(5.0, 2.0, 200) == 1);     // longer than the target: one call
  CHECK(calls_per_sample(0.0, 2.0, 200) == 200);   // nothing measured: as many as allowed
  CHECK(calls_per_sample(std::nan(""), 2.0, 200) == 200);
  CHECK(calls_per_sample(1.0, 2.0, 0) == 1);
}
