#include "runner/matmul_ceiling.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

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
  return {512, 1024};
}

std::vector<gemm_shape> square_shapes(const std::vector<int64_t>& sizes) {
  std::vector<gemm_shape> out;
  for (const int64_t n : sizes) out.push_back({1, n, n, n, fmt::format("square {}", n)});
  return out;
}

std::vector<gemm_shape> model_gemm_shapes(const model_config& m, int64_t batch, int64_t seq, int64_t max_rows) {
  std::vector<gemm_shape> out;
  if (m.hidden <= 0 || m.heads <= 0 || batch <= 0 || seq <= 0) return out;
  const int64_t b = std::max<int64_t>(1, std::min(batch, max_rows / seq));
  const int64_t rows = b * seq, h = m.hidden, f = m.ffn > 0 ? m.ffn : 4 * m.hidden, d = m.hidden / m.heads;
  const auto shape = [&](const char* what, int64_t bt, int64_t mm, int64_t kk, int64_t nn) {
    out.push_back({bt, mm, kk, nn, bt > 1 ? fmt::format("{} {}x{}x{}x{}", what, bt, mm, kk, nn)
                                          : fmt::format("{} {}x{}x{}", what, mm, kk, nn)});
  };
  shape("qkv", 1, rows, h, 3 * h);
  shape("attention_out", 1, rows, h, h);
  shape("ffn_in", 1, rows, h, f);
  shape("ffn_out", 1, rows, f, h);
  shape("scores", b * m.heads, seq, d, seq);
  shape("context", b * m.heads, seq, seq, d);
  return out;
}

double repeat_spread(std::vector<double> seconds) {
  if (seconds.size() < 3) return not_a_number;
  std::sort(seconds.begin(), seconds.end());
  return seconds[0] > 0 ? (seconds[2] - seconds[0]) / seconds[0] : not_a_number;
}

matmul_ceiling measure_matmul_ceiling(torch::Device device, c10::ScalarType dtype, const std::vector<gemm_shape>& shapes,
                                      const ceiling_repeats& repeats) {
  torch::InferenceMode guard;
  const auto started = std::chrono::steady_clock::now();
  matmul_ceiling best;
  best.dtype = dtype_name(dtype);
  best.gflops = 0.0;
  best.repeats = repeats.min;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/1234);
  auto opts = torch::TensorOptions().dtype(torch::kFloat);
  for (const auto& s : shapes) {
    if (s.batch == 1 && s.m == s.k && s.k == s.n) best.sizes.push_back(s.n);
    best.shapes.push_back(s.label);
    const auto dims = [&](int64_t r, int64_t c) {
      return s.batch > 1 ? std::vector<int64_t>{s.batch, r, c} : std::vector<int64_t>{r, c};
    };
    // Both layouts a library meets: B as stored (k×n) and B stored transposed (n×k, read through a
    // transposed view), the layout of a linear's weight and of Q·Kᵀ; BLAS may run them at different
    // rates. Each writes into one preallocated output, so no call pays for an allocation.
    auto a = at::randn(dims(s.m, s.k), gen, opts).to(device, dtype);
    auto b = at::randn(dims(s.k, s.n), gen, opts).to(device, dtype);
    auto bt = at::randn(dims(s.n, s.k), gen, opts).to(device, dtype).transpose(-2, -1);
    auto c = at::empty(dims(s.m, s.n), a.options());
    for (const bool transposed : {false, true}) {
      const auto& rhs = transposed ? bt : b;
      const auto product = [&] { s.batch > 1 ? at::bmm_out(c, a, rhs) : at::mm_out(c, a, rhs); };
      product();  // warm-up: kernel selection, caches
      synchronize(device);
      std::vector<double> times;
      const auto shape_started = std::chrono::steady_clock::now();
      while (static_cast<int>(times.size()) < repeats.max) {
        const auto t0 = std::chrono::steady_clock::now();
        product();
        synchronize(device);
        times.push_back(seconds_since(t0));
        if (static_cast<int>(times.size()) < repeats.min) continue;
        const double spread = repeat_spread(times);
        const double timed = seconds_since(shape_started);
        if ((spread <= repeats.target_spread && timed >= repeats.min_seconds) || timed > repeats.max_seconds) break;
      }
      const double gflops = s.flops() / *std::min_element(times.begin(), times.end()) / 1e9;
      if (gflops > best.gflops) {
        best.gflops = gflops;
        best.size = s.batch == 1 && s.m == s.k && s.k == s.n ? s.n : 0;
        best.shape = s.label + (transposed ? " (B transposed)" : "");
        best.spread = repeat_spread(times);
        best.repeats = static_cast<int>(times.size());
      }
    }
  }
  best.measure_s = seconds_since(started);
  if (shapes.empty()) best.gflops = not_a_number;
  return best;
}

}  // namespace attnbench
