// kernels/cuda/flash_attention.cu on a GPU: against the float64 reference and LibTorch's flash
// backend, over fp16/bf16, head dims 64 and 128, block edges, causal and key padding; padded keys
// unread. Skips (testing::skip_test) without a CUDA device, or when the kernel is not built.
#include <catch2/catch.hpp>

#include <cmath>

#include <torch/cuda.h>

#include "core/sdpa_backend_guard.hpp"
#include "model/attention_impls.hpp"
#include "kernels/cuda/cuda_flash_attention.hpp"
#include "runner/attention_bench.hpp"
#include "test_support.hpp"
#include "tensor_support.hpp"

using namespace attnbench;

namespace {

bool skip_without_kernel() {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return true;
  }
  if (const auto why = cuda_flash_attention_impl().unavailable(torch::Device(torch::kCUDA, 0))) {
    testing::skip_test(*why);
    return true;
  }
  return false;
}

using testing::rel_l2;

}  // namespace

TEST_CASE("cuda-flash2 matches the float64 reference and LibTorch's flash backend", "[gpu][kernels]") {
  if (skip_without_kernel()) return;
  for (auto dtype : {torch::kHalf, torch::kBFloat16})
    for (int64_t d : {64, 128})
      for (int64_t s : {1, 63, 64, 65, 200, 1024})
        for (bool causal : {false, true})
          for (bool padded : {false, true}) {
            const int64_t b = 3, h = 4;
            auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(s * 7 + d));
            // Strided like the model's views of one (B, S, 3, H, D) projection.
            const auto all = at::normal(0.0, 1.0, {b, s, 3, h, d}, gen).to(torch::kCUDA, dtype).permute({2, 0, 3, 1, 4});
            const auto q = all[0], k = all[1], v = all[2];
            const auto lengths =
                padded ? torch::tensor({s, std::max<int64_t>(1, s / 2), int64_t{1}}, torch::kLong) : torch::Tensor();
            INFO(c10::toString(dtype) << " D=" << d << " S=" << s << (causal ? " causal" : "")
                                      << (padded ? " padded" : ""));
            const auto out = cuda_flash_attention(q, k, v, causal, lengths);
            torch::cuda::synchronize();
            const auto ref = reference_attention(q, k, v, causal, lengths);
            const double tol = dtype == torch::kHalf ? attention_tolerance_fp16 : attention_tolerance_bf16;
            CHECK(rel_l2(out, ref) <= tol);
            if (!padded) {  // LibTorch's flash backend takes no mask
              const sdpa_backend_guard guard(sdpa_backend::flash, q.device());
              const auto flash = at::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, causal);
              CHECK(rel_l2(out, flash) <= tol);
            }
          }
}

TEST_CASE("cuda-flash2 never reads padded keys", "[gpu][kernels]") {
  if (skip_without_kernel()) return;
  const int64_t s = 300, len = 137;
  auto q = torch::randn({2, 2, s, 64}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16));
  auto k = torch::randn_like(q), v = torch::randn_like(q);
  const auto lengths = torch::tensor({len, s}, torch::kLong);
  const auto before = cuda_flash_attention(q, k, v, false, lengths);
  k[0].slice(1, len).fill_(std::nan(""));
  v[0].slice(1, len).fill_(std::nan(""));
  const auto after = cuda_flash_attention(q, k, v, false, lengths);
  CHECK(torch::equal(before[0], after[0]));
}

// Issue 30: the host-side parts, which run without a device.
TEST_CASE("cuda-flash2 checks host key lengths on the host, naming the sample", "[kernels]") {
  CHECK_FALSE(key_lengths_problem(torch::tensor({1, 64, 7}, torch::kLong), 64).has_value());
  const auto over = key_lengths_problem(torch::tensor({64, 65}, torch::kLong), 64);
  REQUIRE(over.has_value());
  CHECK_THAT(*over, Catch::Contains("[1, 64]") && Catch::Contains("sample 1 has 65"));
  const auto zero = key_lengths_problem(torch::tensor({0}, torch::kLong), 8);
  REQUIRE(zero.has_value());
  CHECK_THAT(*zero, Catch::Contains("sample 0 has 0"));
}

TEST_CASE("cuda-flash2 names an error pending before its launch as earlier work's", "[kernels]") {
  CHECK_THAT(launch_failure_message("an illegal memory access was encountered", "an illegal memory access"),
             Catch::Contains("not launched") && Catch::Contains("earlier work") &&
                 Catch::Contains("an illegal memory access was encountered"));
  CHECK_THAT(launch_failure_message("", "invalid argument"),
             Catch::Contains("the kernel launch failed: invalid argument") && !Catch::Contains("earlier"));
}

TEST_CASE("cuda-flash2 clamps device key lengths and never syncs to check them", "[gpu][kernels]") {
  if (skip_without_kernel()) return;
  const int64_t s = 130;
  auto q = torch::randn({2, 2, s, 64}, torch::TensorOptions().device(torch::kCUDA).dtype(torch::kHalf));
  auto k = torch::randn_like(q), v = torch::randn_like(q);
  // Out of range on the device: clamped to [1, S], so the same as lengths {S, 1}.
  const auto wild = torch::tensor({s + 50, int64_t{-3}}, torch::kLong).to(torch::kCUDA);
  const auto tame = torch::tensor({s, int64_t{1}}, torch::kLong);
  const auto a = cuda_flash_attention(q, k, v, false, wild);
  const auto b = cuda_flash_attention(q, k, v, false, tame);
  CHECK(torch::equal(a, b));
  CHECK_THROWS_WITH(cuda_flash_attention(q, k, v, false, torch::tensor({s + 1, s}, torch::kLong)),
                    Catch::Contains("sample 0 has 131"));
}
