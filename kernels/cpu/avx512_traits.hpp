// The AVX-512 vector traits of flash_tile_impl.hpp, shared by the fp32 and the bf16 code paths.
// Include only from files compiled with the AVX-512 flags (CMakeLists.txt, kernels section).
#pragma once

#include <immintrin.h>

#include "exp2_poly.hpp"

namespace attnbench::kernels {
namespace {

struct avx512_traits {
  using vec = __m512;
  static constexpr int W = 16;
  // Q·Kᵀ: 8 × 2 accumulators (8 rows × 32 keys); P·V: 6 × 4 (6 rows × 64 of head_dim):
  // at most 24 of the 32 zmm registers hold C, the rest B and the broadcast.
  static constexpr int qk_mr = 8, qk_nv = 2, pv_mr = 6, pv_nv = 4;
  static vec zero() { return _mm512_setzero_ps(); }
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static vec set1(float x) { return _mm512_set1_ps(x); }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static vec mul(vec a, vec b) { return _mm512_mul_ps(a, b); }
  static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
  static vec max(vec a, vec b) { return _mm512_max_ps(a, b); }
  static float reduce_max(vec v) { return _mm512_reduce_max_ps(v); }
  static float reduce_add(vec v) { return _mm512_reduce_add_ps(v); }
  static float first(vec v) { return _mm512_cvtss_f32(v); }
  // 2^x = scalef(2^f, n), n = round(x), f ∈ [−½, ½]; scalef underflows cleanly to 0, and the
  // clamp keeps x − n finite for x = −∞.
  static vec exp2(vec x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-150.0f));
    const vec n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const vec f = _mm512_sub_ps(x, n);
    vec y = _mm512_set1_ps(exp2_c6);
    y = _mm512_fmadd_ps(y, f, _mm512_set1_ps(exp2_c5));
    y = _mm512_fmadd_ps(y, f, _mm512_set1_ps(exp2_c4));
    y = _mm512_fmadd_ps(y, f, _mm512_set1_ps(exp2_c3));
    y = _mm512_fmadd_ps(y, f, _mm512_set1_ps(exp2_c2));
    y = _mm512_fmadd_ps(y, f, _mm512_set1_ps(exp2_c1));
    y = _mm512_fmadd_ps(y, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(y, n);
  }
};

}  // namespace
}  // namespace attnbench::kernels
