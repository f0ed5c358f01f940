// CPU flash attention, portable code path: one float per "vector", for any x86-64 (or any CPU)
// and any head_dim. The algorithm and its contract: flash_tile_impl.hpp; the dispatcher that
// chooses this path: flash_attention.cpp.
#include "flash_tile_impl.hpp"

#include <cmath>

namespace attnbench::kernels {
namespace {

struct scalar_traits {
  using vec = float;
  static constexpr int W = 1;
  // Sixteen scalar accumulators: the compiler keeps them in registers.
  static constexpr int qk_mr = 4, qk_nv = 4, pv_mr = 4, pv_nv = 4;
  static vec zero() { return 0.0f; }
  static vec load(const float* p) { return *p; }
  static void store(float* p, vec v) { *p = v; }
  static vec set1(float x) { return x; }
  static vec fma(vec a, vec b, vec c) { return a * b + c; }
  static vec mul(vec a, vec b) { return a * b; }
  static vec add(vec a, vec b) { return a + b; }
  static vec max(vec a, vec b) { return a > b ? a : b; }
  static float reduce_max(vec v) { return v; }
  static float reduce_add(vec v) { return v; }
  static float first(vec v) { return v; }
  static vec exp2(vec x) { return std::exp2(x); }
};

}  // namespace

flash_kernel flash_kernel_scalar() { return f32_kernel<scalar_traits>(flash_isa::scalar); }

}  // namespace attnbench::kernels
