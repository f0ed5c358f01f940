// Weight-only int8 linears, the AVX-512 code path (16 fp32 lanes): 16 int8 weights loaded as 128
// bits and widened by vpmovsxbd + vcvtdq2ps. Compiled with the AVX-512 flags (CMakeLists.txt).
#include <immintrin.h>

#include "int8_gemv_impl.hpp"

namespace attnbench::kernels {
namespace {

struct avx512_i8 {
  using vec = __m512;
  static constexpr int W = 16;
  static vec zero() { return _mm512_setzero_ps(); }
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static vec load_i8(const int8_t* p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static float reduce_add(vec v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

int8_gemv_fn int8_gemv_avx512() { return &int8_gemv_range<avx512_i8>; }

}  // namespace attnbench::kernels
