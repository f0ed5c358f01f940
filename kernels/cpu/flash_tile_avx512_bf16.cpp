// CPU flash attention, AVX512_BF16 code path: bf16 inputs multiplied as bf16 pairs with
// vdpbf16ps (two products per fp32 lane per instruction, fp32 accumulation), the softmax in fp32.
// Compiled with -mavx512bf16 on top of the AVX-512 flags and run only when the CPU reports
// avx512_bf16 (Zen 4, Cooper Lake, Sapphire Rapids and later). fp32 inputs take the AVX-512 path.
//
// vdpbf16ps multiplies pairs along the reduction dimension, so both GEMMs read their operands as
// 32-bit words holding two bf16 values:
//   S = Q·Kᵀ  reduces over head_dim: a word of Q is (q[2t], q[2t+1]), straight from its row; Kᵀ is
//             packed per block as (head_dim/2 × block_k) words (k[j][2t], k[j][2t+1]);
//   O += P·V  reduces over keys: P is rounded to bf16 into (rows × block_k) and read as words
//             (p[2u], p[2u+1]); V is packed per (b, h) as (⌈seq/2⌉ × head_dim) words
//             (v[2u][e], v[2u+1][e]), zero past the last real key.
// P in bf16 is what FlashAttention and LibTorch's CPU flash kernel do for bf16 inputs; the
// tolerance against float64 is the bf16 one (3e-2), and the tests hold this path to it.
#include "flash_tile_impl.hpp"

#include "avx512_traits.hpp"

namespace attnbench::kernels {
namespace {

using T = avx512_traits;

// C (MR × NV·16) = or += A·B over k word pairs; A (m × k) words, B (k × n) words.
template <int MR, int NV>
inline void micro_kernel_bf16(int64_t k, const uint16_t* a, int64_t lda, const uint32_t* b, int64_t ldb, float* c,
                              int64_t ldc, bool accumulate) {
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? _mm512_loadu_ps(c + i * ldc + j * 16) : _mm512_setzero_ps();
  for (int64_t t = 0; t < k; ++t) {
    __m512bh bv[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) bv[j] = (__m512bh)_mm512_loadu_si512(b + t * ldb + j * 16);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(load_word(a + i * lda + 2 * t)));
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], av, bv[j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(c + i * ldc + j * 16, acc[i][j]);
}

template <int MR, int NV>
inline void tail_rows_bf16(int64_t m, int64_t k, const uint16_t* a, int64_t lda, const uint32_t* b, int64_t ldb,
                           float* c, int64_t ldc, bool accumulate) {
  if constexpr (MR > 0) {
    if (m == MR)
      micro_kernel_bf16<MR, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    else
      tail_rows_bf16<MR - 1, NV>(m, k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

template <int MR, int NV>
inline void column_panel_bf16(int64_t m, int64_t k, const uint16_t* a, int64_t lda, const uint32_t* b, int64_t ldb,
                              float* c, int64_t ldc, bool accumulate) {
  int64_t i = 0;
  for (; i + MR <= m; i += MR) micro_kernel_bf16<MR, NV>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
  if (i < m) tail_rows_bf16<MR - 1, NV>(m - i, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
}

template <int MR, int NV>
inline void tail_panel_bf16(int64_t nv, int64_t m, int64_t k, const uint16_t* a, int64_t lda, const uint32_t* b,
                            int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  if constexpr (NV > 0) {
    if (nv == NV)
      column_panel_bf16<MR, NV>(m, k, a, lda, b, ldb, c, ldc, accumulate);
    else
      tail_panel_bf16<MR, NV - 1>(nv, m, k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

// lda in bf16 elements (a row of A starts at a + i·lda); k in word pairs; ldb in words.
template <int MR, int NV>
inline void gemm_bf16(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint32_t* b,
                      int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  int64_t j = 0;
  for (; j + NV * 16 <= n; j += NV * 16) column_panel_bf16<MR, NV>(m, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  if (j < n) tail_panel_bf16<MR, NV - 1>((n - j) / 16, m, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
}

int64_t bf16_k_packed_bytes(const flash_problem& p) {
  return p.batch * kv_head_count(p) * blocks_k(p) * (p.head_dim / 2) * p.block_k * 4;
}
int64_t bf16_v_packed_bytes(const flash_problem& p) {
  return p.batch * kv_head_count(p) * ((p.seq + 1) / 2) * p.head_dim * 4;
}
// Scores (BQ × block_k) fp32, P (BQ × block_k) bf16 = half as many floats, O (BQ × d), m, l.
int64_t bf16_scratch_floats(const flash_problem& p) {
  return flash_block_q * (p.block_k + p.block_k / 2 + p.head_dim + 2);
}

// Keys (and values) before the sample's first real key are packed as zeros: never read.
void bf16_pack(const flash_problem& p, int64_t bkv) {
  const int64_t kvh = kv_head_count(p), b = bkv / kvh, g = bkv % kvh, d = p.head_dim, bk = p.block_k;
  const int64_t len = key_length(p, b), begin = key_begin(p, b), j_start = begin / bk * bk;
  pack_k_pair_panels(p, bkv, 16);
  const uint16_t* v = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + g * p.v_stride[1];
  uint32_t* vw = static_cast<uint32_t*>(p.v_packed) + bkv * ((p.seq + 1) / 2) * d;  // (⌈S/2⌉, d) words
  for (int64_t u = j_start / 2; 2 * u < len; ++u) {
    const uint16_t* lo = 2 * u >= begin ? v + 2 * u * p.v_stride[2] : nullptr;
    const uint16_t* hi = 2 * u + 1 < len && 2 * u + 1 >= begin ? v + (2 * u + 1) * p.v_stride[2] : nullptr;
    for (int64_t e = 0; e < d; ++e)
      vw[u * d + e] = (lo ? static_cast<uint32_t>(lo[e]) : 0u) | (hi ? static_cast<uint32_t>(hi[e]) << 16 : 0u);
  }
}

void bf16_tile(const flash_problem& p, int64_t bh, int64_t q_tile, float* scratch) {
  const int64_t b = bh / p.heads, h = bh % p.heads, d = p.head_dim, bk = p.block_k, half = d / 2;
  const int64_t bkv = kv_index(p, bh);
  const int64_t i0 = q_tile * flash_block_q, rows = min64(flash_block_q, query_rows(p) - i0);
  const tile_keys keys = keys_for_tile(p, b, i0, rows);
  const float c = p.scale * 1.4426950408889634f;  // log2(e)
  float* s = scratch;                                           // (BQ, bk) fp32
  uint16_t* pb = reinterpret_cast<uint16_t*>(s + flash_block_q * bk);  // (BQ, bk) bf16
  float* o = s + flash_block_q * (bk + bk / 2);                 // (BQ, d)
  float* m = o + flash_block_q * d;                             // (BQ)
  float* l = m + flash_block_q;                                 // (BQ)

  const uint16_t* q = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[1] + i0 * p.q_stride[2];
  const uint32_t* panels = static_cast<const uint32_t*>(p.k_packed) + bkv * blocks_k(p) * half * bk;
  const uint32_t* vw = static_cast<const uint32_t*>(p.v_packed) + bkv * ((p.seq + 1) / 2) * d;
  for (int64_t r = 0; r < rows; ++r) {
    m[r] = neg_inf();
    l[r] = 0;
  }
  for (int64_t x = 0; x < rows * d; ++x) o[x] = 0;

  for (int64_t j0 = keys.j_start; j0 < keys.end; j0 += bk) {
    const int64_t n = min64(bk, keys.end - j0), n_pad = round_up(n, 16), pairs = (n + 1) / 2;
    gemm_bf16<T::qk_mr, T::qk_nv>(rows, n_pad, half, q, p.q_stride[2], panels + (j0 / bk) * half * bk, bk, s, bk,
                                  false);
    for (int64_t r = 0; r < rows; ++r) {
      float* sr = s + r * bk;
      uint16_t* pr = pb + r * bk;
      int64_t lo, hi;
      visible_in_block(p, keys, i0 + r, j0, n, lo, hi);
      if (hi <= lo) {
        for (int64_t j = 0; j < n_pad; ++j) pr[j] = 0;
        continue;
      }
      const float alpha = softmax_row<T>(sr, lo, hi, n_pad, c, m[r], l[r]);
      if (alpha != 1.0f && !p.planted_skip_rescale) scale_row<T>(o + r * d, d, alpha);
      for (int64_t j = 0; j < n_pad; j += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pr + j), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(sr + j)));
    }
    // j0 is a multiple of bk, which is even: block j0's first pair is word row j0/2 of V.
    gemm_bf16<T::pv_mr, T::pv_nv>(rows, d, pairs, pb, bk, vw + (j0 / 2) * d, d, o, d, true);
  }
  write_rows(p, b, h, i0, rows, o, l);
}

}  // namespace

flash_kernel flash_kernel_avx512_bf16() {
  flash_kernel k;
  k.isa = flash_isa::avx512_bf16;
  k.vector_width = 16;
  k.k_packed_bytes = bf16_k_packed_bytes;
  k.v_packed_bytes = bf16_v_packed_bytes;
  k.scratch_floats = bf16_scratch_floats;
  k.pack = bf16_pack;
  k.tile = bf16_tile;
  return k;
}

}  // namespace attnbench::kernels
