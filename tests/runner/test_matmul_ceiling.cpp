#include <catch2/catch.hpp>

#include <cmath>

#include "runner/matmul_ceiling.hpp"

using namespace attnbench;

TEST_CASE("the matmul ceiling is the best over several sizes and repeats, and says what it cost",
          "[runner][ceiling]") {
  const auto c = measure_matmul_ceiling(torch::kCPU, torch::kFloat, {32, 64, 96}, 2);
  CHECK(c.dtype == "fp32");
  CHECK(c.sizes == std::vector<int64_t>{32, 64, 96});
  CHECK(c.repeats == 2);
  CHECK((c.size == 32 || c.size == 64 || c.size == 96));
  CHECK(c.gflops > 0);
  CHECK(c.measure_s > 0);
  CHECK(c.measure_s < 5);  // three tiny GEMMs

  // The figure is the best size's, not the last one's: a single size cannot beat the set.
  const auto one = measure_matmul_ceiling(torch::kCPU, torch::kFloat, {32}, 2);
  CHECK(one.size == 32);
  CHECK(one.sizes.size() == 1);

  // The CPU default covers more than one size (one 1024³ GEMM once read 279, then 310 GFLOP/s).
  CHECK(default_ceiling_sizes(torch::kCPU).size() >= 3);
}
