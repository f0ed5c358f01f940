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
