// Weight-only int8 linears, the scalar code path (any x86-64, any k): the loop of
// int8_gemv_impl.hpp one lane wide.
#include "int8_gemv_impl.hpp"

namespace attnbench::kernels {
namespace {

struct scalar_i8 {
  using vec = float;
  static constexpr int W = 1;
  static vec zero() { return 0.0f; }
  static vec load(const float* p) { return *p; }
  static vec load_i8(const int8_t* p) { return static_cast<float>(*p); }
  static vec fma(vec a, vec b, vec c) { return a * b + c; }
  static float reduce_add(vec v) { return v; }
};

}  // namespace

int8_gemv_fn int8_gemv_scalar() { return &int8_gemv_range<scalar_i8>; }

}  // namespace attnbench::kernels
