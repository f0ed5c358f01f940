// Weight-only int8 linears, the AVX2 + FMA code path (8 fp32 lanes): 8 int8 weights loaded as 64
// bits and widened by vpmovsxbd + vcvtdq2ps. Compiled with -mavx2 -mfma (CMakeLists.txt).
#include <immintrin.h>

#include "int8_gemv_impl.hpp"

namespace attnbench::kernels {
namespace {

struct avx2_i8 {
  using vec = __m256;
  static constexpr int W = 8;
  static vec zero() { return _mm256_setzero_ps(); }
  static vec load(const float* p) { return _mm256_loadu_ps(p); }
  static vec load_i8(const int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
  static float reduce_add(vec v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
  }
};

}  // namespace

int8_gemv_fn int8_gemv_avx2() { return &int8_gemv_range<avx2_i8>; }

}  // namespace attnbench::kernels
