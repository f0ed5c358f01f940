#include "runner/matmul_ceiling.hpp"

#include <algorithm>
#include <chrono>

#include "core/device.hpp"

namespace attnbench {
namespace {

std::string dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Half: return "fp16";
    default: return "fp32";
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<int64_t> default_ceiling_sizes(torch::Device device) {
  if (device.is_cuda()) return {4096, 8192};
  return {512, 1024, 1536};
}

matmul_ceiling measure_matmul_ceiling(torch::Device device, c10::ScalarType dtype, const std::vector<int64_t>& sizes,
                                      int repeats) {
  torch::InferenceMode guard;
  const auto started = std::chrono::steady_clock::now();
  matmul_ceiling best{dtype_name(dtype), 0, 0.0};
  best.sizes = sizes;
  best.repeats = repeats;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/1234);
  auto opts = torch::TensorOptions().dtype(torch::kFloat);
  for (const int64_t n : sizes) {
    auto a = at::randn({n, n}, gen, opts).to(device, dtype);
    auto b = at::randn({n, n}, gen, opts).to(device, dtype);
    auto c = torch::matmul(a, b);  // warm-up: kernel selection, allocator, caches
    synchronize(device);
    double best_s = 1e30;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      c = torch::matmul(a, b);
      synchronize(device);
      best_s = std::min(best_s, seconds_since(t0));
    }
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    const double gflops = flops / best_s / 1e9;
    if (gflops > best.gflops) {
      best.gflops = gflops;
      best.size = n;
    }
  }
  best.measure_s = seconds_since(started);
  if (sizes.empty()) best.gflops = not_a_number;
  return best;
}

}  // namespace attnbench
