#include <catch2/catch.hpp>

#include <cmath>

#include "report/ceilings.hpp"
#include "runner/matmul_ceiling.hpp"

using namespace attnbench;

TEST_CASE("the matmul ceiling is the best over squares and the model's products, with its spread",
          "[runner][ceiling]") {
  std::vector<gemm_shape> shapes = square_shapes({32, 64, 96});
  shapes.push_back({4, 16, 8, 16, "scores 4x16x8x16"});
  const auto c = measure_matmul_ceiling(torch::kCPU, torch::kFloat, shapes, {5, 20, 0.03, 0.0, 0.5});
  CHECK(c.dtype == "fp32");
  CHECK(c.sizes == std::vector<int64_t>{32, 64, 96});  // the squares among them
  CHECK(c.shapes.size() == 4);
  CHECK(c.shapes.back() == "scores 4x16x8x16");
  CHECK(!c.shape.empty());
  CHECK(c.repeats >= 5);
  CHECK(c.repeats <= 20);
  CHECK(std::isfinite(c.spread));
  CHECK(c.spread >= 0);
  CHECK(c.gflops > 0);
  CHECK(c.measure_s > 0);
  CHECK(c.measure_s < 10);  // tiny GEMMs, each at most half a second

  // The figure is the best shape's, not the last one's: one shape alone cannot beat the set.
  const auto one = measure_matmul_ceiling(torch::kCPU, torch::kFloat, square_shapes({32}), {5, 10, 0.03, 0.0, 0.2});
  CHECK(one.size == 32);
  CHECK(one.sizes.size() == 1);
  CHECK(default_ceiling_sizes(torch::kCPU).size() >= 2);
}

TEST_CASE("the model's own products: QKV, attention out, the FFN and the attention core", "[runner][ceiling]") {
  model_config m;
  m.hidden = 384;
  m.heads = 12;
  m.ffn = 1536;
  const auto s = model_gemm_shapes(m, 8, 512);
  REQUIRE(s.size() == 6);
  CHECK(s[0].label == "qkv 4096x384x1152");
  CHECK(s[2].label == "ffn_in 4096x384x1536");
  CHECK(s[3].label == "ffn_out 4096x1536x384");
  CHECK(s[4].label == "scores 96x512x32x512");
  CHECK(s[5].label == "context 96x512x512x32");
  CHECK(s[4].flops() == Approx(2.0 * 96 * 512 * 32 * 512));
  // B·S is bounded: 64 samples of 512 tokens measure 16 of them at a time.
  CHECK(model_gemm_shapes(m, 64, 512)[0].m == 8192);
}

TEST_CASE("a share beyond the ceiling's spread is a bug of the ceiling", "[runner][ceiling]") {
  CHECK(repeat_spread({1.0, 1.02, 1.01, 1.5}) == Approx(0.02));
  CHECK(std::isnan(repeat_spread({1.0, 1.1})));
  CHECK_FALSE(ceiling_share_is_bug(0.97, 0.02));
  CHECK_FALSE(ceiling_share_is_bug(1.015, 0.02));  // level with the ceiling, within its spread
  CHECK(ceiling_share_is_bug(1.05, 0.02));         // beyond it: the ceiling was not the best
  CHECK(ceiling_share_is_bug(1.001, std::nan("")));
}
