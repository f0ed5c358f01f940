// The physical yardstick: how many GFLOP/s matrix products reach on this device in a given dtype,
// at the run's thread count. Every variant's achieved GFLOP/s is reported as a share of this.
//
// A ceiling must be a ceiling (issue 37 part 4): on a Sapphire Rapids one square fp32 GEMM read
// 187, 327 and 355 GFLOP/s in three runs 20 minutes apart, and shares of up to 125% were printed.
// So the ceiling is the best over
//   - squares (n×n×n) and the model's own products: (B·S)×H×3H (QKV), (B·S)×H×H (attention out),
//     (B·S)×H×F and (B·S)×F×H (the FFN), and the attention's batched Q·Kᵀ and P·V,
// each in both layouts of B (as stored, and stored transposed as a linear's weight and Kᵀ are),
// into a preallocated output, each after an untimed warm-up, each the best of as many timed calls as it takes for the best
// three to agree within 3% (at least 10 calls and 0.2 s, at most 60 calls or 1 s a layout). The spread of the winning
// shape is reported beside the figure: a share of it above 100% by more than that spread is a bug
// in the ceiling, and the run says so in the variant's notes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "report/result.hpp"

namespace attnbench {

// One product shape: `batch` independent (m×k)·(k×n) products.
struct gemm_shape {
  int64_t batch = 1, m = 0, k = 0, n = 0;
  std::string label;  // "square 1024", "ffn_in 4096x384x1536", "scores 96x512x32x512"
  double flops() const { return 2.0 * static_cast<double>(batch * m) * static_cast<double>(k * n); }
};

// A shared machine's slow spell can make a handful of calls agree at a rate well below the truth
// (a 2-core Zen 3 VM once read 91.6 GFLOP/s for fp32 where the same shapes reach 134-172 a minute
// later), so a layout is timed for at least min_seconds before its spread may stop it.
struct ceiling_repeats {
  int min = 10;                   // timed calls a shape's layout gets at least
  int max = 60;                   // and at most
  double target_spread = 0.03;    // stop once the best three calls agree within this
  double min_seconds = 0.2;       // and the layout has been timed at least this long
  double max_seconds = 1.0;       // or once it has been timed this long
};

// Best over `shapes` of each one's best timed call on random data, each after one untimed warm-up.
matmul_ceiling measure_matmul_ceiling(torch::Device device, c10::ScalarType dtype, const std::vector<gemm_shape>& shapes,
                                      const ceiling_repeats& repeats = {});

// The default squares: big enough to be compute-bound on the device, small enough that all of them
// take well under a second (CPU: 512 and 1024 → 0.27 and 2.1 GFLOP a call; 1536 measured no more
// on a Zen 3 and cost most of the time; CUDA:
// 4096 and 8192 → 0.14 and 1.1 TFLOP).
std::vector<int64_t> default_ceiling_sizes(torch::Device device);
std::vector<gemm_shape> square_shapes(const std::vector<int64_t>& sizes);

// The encoder's products at `batch` samples of `seq` tokens (B·S rows at most max_rows): QKV,
// attention out, the FFN's two, and the attention core's Q·Kᵀ and P·V over B·heads.
std::vector<gemm_shape> model_gemm_shapes(const model_config& m, int64_t batch, int64_t seq, int64_t max_rows = 8192);

// (best3 − best) / best over a shape's timed calls: how far the ceiling may sit below the truth.
double repeat_spread(std::vector<double> seconds);

}  // namespace attnbench
