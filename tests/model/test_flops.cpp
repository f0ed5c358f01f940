#include <catch2/catch.hpp>

#include "model/flops.hpp"
#include "test_support.hpp"

using namespace attnbench;

TEST_CASE("forward FLOPs follow the documented formula", "[model]") {
  auto m = testing::tiny_model();  // L=2, H=128, F=512, C=3
  const double s = 16;
  const double per_layer = 2 * s * 128 * 384 + 4 * s * s * 128 + 2 * s * 128 * 128 + 4 * s * 128 * 512;
  const double head = 2.0 * 128 * 128 + 2.0 * 128 * 3;
  CHECK(forward_flops(m, 1, 16) == Approx(2 * per_layer + head));
  CHECK(forward_flops(m, 4, 16) == Approx(4 * (2 * per_layer + head)));
}

TEST_CASE("the cost planner's model reads the FLOP count exactly", "[model]") {
  auto m = testing::tiny_model();  // L=2, H=128, F=512, C=3
  const batch_cost_model c = batch_cost_model_of(m, /*per_batch=*/0);
  // Per layer per token, linear: 2·H·3H + 2·H² + 4·H·F; attention per token²: 4·H.
  const double linear = 2 * (2.0 * 128 * 384 + 2.0 * 128 * 128 + 4.0 * 128 * 512);
  CHECK(c.attention == Approx(2 * 4.0 * 128 / linear));
  CHECK(c.per_row == Approx((2.0 * 128 * 128 + 2.0 * 128 * 3) / linear));
  for (int64_t b : {1, 3, 8})
    for (int64_t s : {1, 16, 200}) CHECK(c.cost(b, s) * linear == Approx(forward_flops(m, b, s)));
  CHECK(batch_cost_model_of(m, 40).cost(2, 16) == Approx(c.cost(2, 16) + 40));
}

TEST_CASE("a core that skips padded keys is counted over real keys only", "[model]") {
  auto m = testing::tiny_model();  // L=2, H=128
  const double s = 16;
  // Rows of 16 and 5 real tokens padded to 16: attention 4·S·L·H per layer per row.
  const double full = forward_flops(m, 2, 16);
  const double skipped = 2 * 4 * s * (16 - 5) * 128;  // the padded keys of the second row, both layers
  CHECK(forward_flops_real_keys(m, {16, 5}, 16) == Approx(full - skipped));
  CHECK(forward_flops_real_keys(m, {16, 16}, 16) == Approx(full));
}
