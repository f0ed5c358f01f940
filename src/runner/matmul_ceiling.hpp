// The physical yardstick: how many GFLOP/s one large square GEMM reaches on this device in a
// given dtype. Every variant's achieved GFLOP/s is reported as a share of this.
#pragma once

#include <torch/torch.h>

#include "report/result.hpp"

namespace attnbench {

// Best of `repeats` timed n×n×n matmuls on random data after one untimed warm-up.
matmul_ceiling measure_matmul_ceiling(torch::Device device, c10::ScalarType dtype, int64_t n, int repeats);

// The default n: big enough to be compute-bound on the device, small enough to take well under
// a second (CPU: 1024 → 2.1 GFLOP; CUDA: 8192 → 1.1 TFLOP).
int64_t default_ceiling_size(torch::Device device);

}  // namespace attnbench
