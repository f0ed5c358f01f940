// CPU flash attention, AVX2 + FMA code path (8 fp32 lanes, 16 vector registers): compiled with
// -mavx2 -mfma and run only when the CPU reports both. bf16 inputs are widened to fp32 when
// packed: without AVX512_BF16 there is no bf16 arithmetic to use. Algorithm: flash_tile_impl.hpp.
#include "flash_tile_impl.hpp"

#include <immintrin.h>

#include "exp2_poly.hpp"

namespace attnbench::kernels {
namespace {

struct avx2_traits {
  using vec = __m256;
  static constexpr int W = 8;
  // 6 × 2 accumulators + 2 B vectors + 1 broadcast = 15 of the 16 ymm registers.
  static constexpr int qk_mr = 6, qk_nv = 2, pv_mr = 6, pv_nv = 2;
  static vec zero() { return _mm256_setzero_ps(); }
  static vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
  static vec set1(float x) { return _mm256_set1_ps(x); }
  static vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static vec mul(vec a, vec b) { return _mm256_mul_ps(a, b); }
  static vec add(vec a, vec b) { return _mm256_add_ps(a, b); }
  static vec max(vec a, vec b) { return _mm256_max_ps(a, b); }
  static float reduce_max(vec v) {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    x = _mm_max_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
  }
  static float reduce_add(vec v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
  }
  static float first(vec v) { return _mm256_cvtss_f32(v); }
  // 2^x = 2^n · 2^f, n = round(x), f ∈ [−½, ½]; x ≥ −126 keeps 2^n a normal float (below that the
  // result is < 1.2e-38, which the softmax cannot tell from 0 next to its maximum's 1).
  static vec exp2(vec x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(-126.0f));
    const vec n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const vec f = _mm256_sub_ps(x, n);
    vec y = _mm256_set1_ps(exp2_c6);
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(exp2_c5));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(exp2_c4));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(exp2_c3));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(exp2_c2));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(exp2_c1));
    y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
  }
};

}  // namespace

flash_kernel flash_kernel_avx2() { return f32_kernel<avx2_traits>(flash_isa::avx2); }

}  // namespace attnbench::kernels
