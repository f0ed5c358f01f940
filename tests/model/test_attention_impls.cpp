// The attention implementations' registry and the float64 reference.
#include <catch2/catch.hpp>

#include <algorithm>

#include "model/attention_impls.hpp"

using namespace attnbench;

namespace {

bool has(const std::string& name) {
  const auto impls = attention_impls();
  return std::any_of(impls.begin(), impls.end(), [&](const attention_impl& i) { return i.name == name; });
}

}  // namespace

TEST_CASE("attention impls: built-ins first, registered kernels after, removable", "[model]") {
  const auto impls = attention_impls();
  REQUIRE(impls.size() >= 5);
  CHECK(impls[0].name == "naive");
  CHECK(impls[1].name == "sdpa-math");
  CHECK(impls[2].name == "sdpa-flash");
  CHECK(impls[0].unavailable(torch::kCPU) == std::nullopt);
  CHECK(impls[3].unavailable(torch::kCPU).has_value());  // efficient: CUDA only
  attention_impl k;
  k.name = "kernel-under-test";
  k.unavailable = [](torch::Device) -> std::optional<std::string> { return std::nullopt; };
  register_attention_impl(k);
  CHECK(has("kernel-under-test"));
  unregister_attention_impl("kernel-under-test");
  CHECK_FALSE(has("kernel-under-test"));
}

TEST_CASE("attention impls: the reference is softmax(QKᵀ/√d)·V in float64, causal too", "[model]") {
  torch::manual_seed(3);
  const auto q = torch::randn({2, 3, 17, 8}), k = torch::randn({2, 3, 17, 8}),
             v = torch::randn({2, 3, 17, 8});
  for (bool causal : {false, true}) {
    const auto ref = reference_attention(q, k, v, causal);
    CHECK(ref.scalar_type() == torch::kDouble);
    CHECK(ref.sizes() == q.sizes());
    const auto want = at::scaled_dot_product_attention(q.to(torch::kDouble), k.to(torch::kDouble),
                                                       v.to(torch::kDouble), std::nullopt, 0.0, causal);
    CHECK((ref - want).abs().max().item<double>() < 1e-12);
  }
  // Longer than one block of query rows, causal: still the same.
  const auto ql = torch::randn({1, 1, 1500, 4}), kl = torch::randn({1, 1, 1500, 4}),
             vl = torch::randn({1, 1, 1500, 4});
  const auto want = at::scaled_dot_product_attention(ql.to(torch::kDouble), kl.to(torch::kDouble),
                                                     vl.to(torch::kDouble), std::nullopt, 0.0, true);
  CHECK((reference_attention(ql, kl, vl, true) - want).abs().max().item<double>() < 1e-12);
  // Causal: the first query sees only the first key, so its output is v's first row.
  const auto ref = reference_attention(q, k, v, true);
  CHECK((ref.select(2, 0) - v.to(torch::kDouble).select(2, 0)).abs().max().item<double>() < 1e-12);
}
