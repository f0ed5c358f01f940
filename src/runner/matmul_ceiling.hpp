// The physical yardstick: how many GFLOP/s a square GEMM reaches on this device in a given dtype,
// at the run's thread count. Every variant's achieved GFLOP/s is reported as a share of this.
//
// One size measured once is not a ceiling: on a Sapphire Rapids one 1024³ fp32 GEMM read 279 and
// then 310 GFLOP/s ten minutes apart, and a variant showed 103.8% of the lower one. So the ceiling
// is the best of several sizes, each the best of several timed repeats after an untimed warm-up,
// and the report records the sizes, the repeats and what measuring them cost.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "report/result.hpp"

namespace attnbench {

// Best over `sizes` of the best of `repeats` timed n×n×n matmuls on random data, each size after
// one untimed warm-up. `size` is the n that reached the best; `measure_s` the wall time of it all.
matmul_ceiling measure_matmul_ceiling(torch::Device device, c10::ScalarType dtype, const std::vector<int64_t>& sizes,
                                      int repeats);

// The default sizes: big enough to be compute-bound on the device, small enough that all of them
// take well under a second (CPU: 512, 1024 and 1536 → 0.27, 2.1 and 7.2 GFLOP a call; CUDA:
// 4096 and 8192 → 0.14 and 1.1 TFLOP).
std::vector<int64_t> default_ceiling_sizes(torch::Device device);

}  // namespace attnbench
