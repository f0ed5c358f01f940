// Shared tensor helpers for tests (LibTorch tests only; test_support.hpp stays torch-free).
#pragma once

#include <torch/torch.h>

namespace attnbench::testing {

// ‖a − b‖ / ‖b‖ computed in float64 on the CPU, whatever the tensors' dtype and device.
inline double rel_l2(const torch::Tensor& a, const torch::Tensor& b) {
  const auto x = a.to(torch::kCPU, torch::kDouble), y = b.to(torch::kCPU, torch::kDouble);
  return ((x - y).norm() / y.norm()).item<double>();
}

}  // namespace attnbench::testing
