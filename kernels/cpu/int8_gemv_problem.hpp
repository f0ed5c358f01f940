// The torch-free interface between the weight-only int8 dispatcher (int8_gemv.cpp) and its code
// paths (int8_gemv_{scalar,avx2,avx512}.cpp, each compiled with its own -m flags).
#pragma once

#include <cstdint>

namespace attnbench::kernels {

// y (rows × n, row stride y_stride) = x (rows × k, row stride x_stride) · (w · scale)ᵀ + bias, with
// w (n × k) int8 row-major, scale (n) and bias (n, or null) float32.
struct int8_gemv_problem {
  const float* x = nullptr;
  int64_t rows = 0, k = 0, n = 0, x_stride = 0;
  const int8_t* w = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  int64_t y_stride = 0;
};

// Computes outputs [n0, n1) of every row.
using int8_gemv_fn = void (*)(const int8_gemv_problem&, int64_t n0, int64_t n1);

int8_gemv_fn int8_gemv_scalar();
int8_gemv_fn int8_gemv_avx2();
int8_gemv_fn int8_gemv_avx512();

}  // namespace attnbench::kernels
