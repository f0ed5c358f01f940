#include "runner/matmul_ceiling.hpp"

#include <algorithm>
#include <chrono>

#include "core/device.hpp"

namespace attnbench {
namespace {

constexpr int64_t cpu_gemm_size = 1024;
constexpr int64_t cuda_gemm_size = 8192;

std::string dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Half: return "fp16";
    default: return "fp32";
  }
}

}  // namespace

int64_t default_ceiling_size(torch::Device device) { return device.is_cuda() ? cuda_gemm_size : cpu_gemm_size; }

matmul_ceiling measure_matmul_ceiling(torch::Device device, c10::ScalarType dtype, int64_t n, int repeats) {
  torch::InferenceMode guard;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/1234);
  auto opts = torch::TensorOptions().dtype(torch::kFloat);
  auto a = at::randn({n, n}, gen, opts).to(device, dtype);
  auto b = at::randn({n, n}, gen, opts).to(device, dtype);
  auto c = torch::matmul(a, b);  // warm-up: kernel selection, allocator, caches
  synchronize(device);
  double best_s = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    c = torch::matmul(a, b);
    synchronize(device);
    best_s = std::min(best_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return matmul_ceiling{dtype_name(dtype), n, flops / best_s / 1e9};
}

}  // namespace attnbench
