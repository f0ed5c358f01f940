// The CPU flash-attention forward, written once over a vector type and included by each code
// path's file (flash_tile_scalar.cpp, _avx2.cpp, _avx512.cpp, _avx512_bf16.cpp), which defines
// the traits `T` (lane count, load/store/fma/max/exp2, register blocking) and instantiates it.
//
// Per (batch b, head h, query tile of flash_block_q rows), with c = scale·log2(e):
//   m = −∞, l = 0, O = 0                                         per row
//   for each block of keys [j0, j0 + n) below the tile's last visible key:
//     S = Q·Kᵀ                           (rows × n, one register-blocked GEMM against a packed
//                                          Kᵀ panel of the block)
//     per row: m' = max(m, c·max S), p = 2^(c·S − m'), α = 2^(m − m'),
//              l = α·l + Σp, O = α·O, m = m'   (the online-softmax rescale)
//     O += P·V                           (a second GEMM, straight from V's rows)
//   out = O / l
// Nothing S×S is ever held: per task the scratch is rows × (block_k + head_dim) floats.
// Key padding costs nothing: blocks end at the sample's key length, the Q·Kᵀ GEMM stops at the
// last real key (rounded up to the vector width) and P·V at the last real key exactly. Causal
// rows stop at their own position; whole blocks after the tile's last row are never visited.
//
// Every function here is in an anonymous namespace: each code path's copy stays its own, so the
// linker cannot swap an AVX-512 instantiation into the scalar path.
#pragma once

#include <cstdint>

#include "flash_problem.hpp"

namespace attnbench::kernels {
namespace {

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
inline float max_f(float a, float b) { return a > b ? a : b; }
inline float neg_inf() { return -__builtin_inff(); }

inline float bf16_to_float(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// Round to nearest even, as LibTorch's c10::BFloat16 does; NaN stays NaN.
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline int64_t key_length(const flash_problem& p, int64_t b) { return p.key_lengths ? p.key_lengths[b] : p.seq; }
inline int64_t key_begin(const flash_problem& p, int64_t b) { return p.key_begins ? p.key_begins[b] : 0; }
inline int64_t blocks_k(const flash_problem& p) { return (p.seq + p.block_k - 1) / p.block_k; }
inline int64_t query_rows(const flash_problem& p) { return p.q_seq > 0 ? p.q_seq : p.seq; }
inline int64_t kv_head_count(const flash_problem& p) { return p.kv_heads > 0 ? p.kv_heads : p.heads; }
// The (batch, kv head) whose keys and values query head bh = b·heads + h reads.
inline int64_t kv_index(const flash_problem& p, int64_t bh) {
  const int64_t kvh = kv_head_count(p);
  return (bh / p.heads) * kvh + (bh % p.heads) / (p.heads / kvh);
}
// How far right of its row index a causal query's last visible key lies (0 for an encoder).
inline int64_t causal_offset(const flash_problem& p) { return p.causal ? p.seq - query_rows(p) : 0; }

// The keys a tile of `rows` query rows from i0 reads: the blocks from j_start up to end.
struct tile_keys {
  int64_t begin = 0;  // the sample's first real key
  int64_t end = 0;    // one past the last key any of the tile's rows sees
  int64_t j_start = 0;  // the first key block visited (a multiple of block_k)
};
inline tile_keys keys_for_tile(const flash_problem& p, int64_t b, int64_t i0, int64_t rows) {
  tile_keys t;
  const int64_t len = key_length(p, b);
  t.begin = key_begin(p, b);
  t.end = p.causal ? min64(len, i0 + rows + causal_offset(p)) : len;
  t.j_start = t.begin / p.block_k * p.block_k;
  return t;
}
// Row r's visible keys within the block [j0, j0 + n): [lo, hi), empty when hi <= lo.
inline void visible_in_block(const flash_problem& p, const tile_keys& t, int64_t row, int64_t j0, int64_t n,
                             int64_t& lo, int64_t& hi) {
  lo = max64(0, t.begin - j0);
  hi = p.causal ? min64(n, row + causal_offset(p) - j0 + 1) : n;
}

// Two bf16 values as one 32-bit word (the pair layout of vdpbf16ps and the AMX tiles).
inline uint32_t load_word(const uint16_t* p) {
  uint32_t w;
  __builtin_memcpy(&w, p, 4);
  return w;
}

// The bf16 paths' Kᵀ panels for (batch, kv head) bkv: per key block, (head_dim/2 × block_k) words
// (k[j][2t], k[j][2t+1]), zero past the last real key up to a multiple of pad_keys (16: one
// vector; 32: one AMX tile), and zero before the sample's first real key (never read).
inline void pack_k_pair_panels(const flash_problem& p, int64_t bkv, int64_t pad_keys) {
  const int64_t kvh = kv_head_count(p), b = bkv / kvh, g = bkv % kvh, bk = p.block_k, half = p.head_dim / 2;
  const int64_t len = key_length(p, b), begin = key_begin(p, b);
  const uint16_t* k = static_cast<const uint16_t*>(p.k) + b * p.k_stride[0] + g * p.k_stride[1];
  uint32_t* panels = static_cast<uint32_t*>(p.k_packed) + bkv * blocks_k(p) * half * bk;
  for (int64_t j0 = begin / bk * bk; j0 < len; j0 += bk) {
    uint32_t* panel = panels + (j0 / bk) * half * bk;
    const int64_t n = min64(bk, len - j0), n_pad = min64(bk, round_up(n, pad_keys));
    for (int64_t jj = 0; jj < n; ++jj) {
      const uint16_t* row = k + (j0 + jj) * p.k_stride[2];
      const bool real = j0 + jj >= begin;
      for (int64_t t = 0; t < half; ++t) panel[t * bk + jj] = real ? load_word(row + 2 * t) : 0u;
    }
    for (int64_t t = 0; t < half; ++t)
      for (int64_t jj = n; jj < n_pad; ++jj) panel[t * bk + jj] = 0;
  }
}

// --- GEMM: C (m × n) = or += A (m × k) · B (k × n), n a multiple of T::W ----------------------
// The micro-kernel keeps an MR × NV·W block of C in registers and streams k: per step NV vector
// loads of B and MR broadcasts of A feed MR·NV fused multiply-adds.
template <class T, int MR, int NV>
inline void micro_kernel(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                         int64_t ldc, bool accumulate) {
  typename T::vec acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? T::load(c + i * ldc + j * T::W) : T::zero();
  for (int64_t p = 0; p < k; ++p) {
    typename T::vec bv[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) bv[j] = T::load(b + p * ldb + j * T::W);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const typename T::vec av = T::set1(a[i * lda + p]);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) acc[i][j] = T::fma(av, bv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) T::store(c + i * ldc + j * T::W, acc[i][j]);
}

// The last m % MR rows, with a smaller register block.
template <class T, int MR, int NV>
inline void tail_rows(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                      int64_t ldc, bool accumulate) {
  if constexpr (MR > 0) {
    if (m == MR)
      micro_kernel<T, MR, NV>(k, a, lda, b, ldb, c, ldc, accumulate);
    else
      tail_rows<T, MR - 1, NV>(m, k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

// All m rows for one column panel of NV vectors.
template <class T, int MR, int NV>
inline void column_panel(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                         float* c, int64_t ldc, bool accumulate) {
  int64_t i = 0;
  for (; i + MR <= m; i += MR) micro_kernel<T, MR, NV>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
  if (i < m) tail_rows<T, MR - 1, NV>(m - i, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, accumulate);
}

// A last panel narrower than NV vectors.
template <class T, int MR, int NV>
inline void tail_panel(int64_t nv, int64_t m, int64_t k, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  if constexpr (NV > 0) {
    if (nv == NV)
      column_panel<T, MR, NV>(m, k, a, lda, b, ldb, c, ldc, accumulate);
    else
      tail_panel<T, MR, NV - 1>(nv, m, k, a, lda, b, ldb, c, ldc, accumulate);
  }
}

template <class T, int MR, int NV>
inline void gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                 float* c, int64_t ldc, bool accumulate) {
  constexpr int64_t panel = int64_t{NV} * T::W;
  int64_t j = 0;
  for (; j + panel <= n; j += panel) column_panel<T, MR, NV>(m, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
  if (j < n) tail_panel<T, MR, NV - 1>((n - j) / T::W, m, k, a, lda, b + j, ldb, c + j, ldc, accumulate);
}

// --- the online softmax over one row of a block of scores -----------------------------------
// s: n_pad scores (n_pad a multiple of T::W), of which [first, visible) are real (first <
// visible); on return s holds p = 2^(c·s − m') there and 0 elsewhere. m, l: the row's running max
// (log2 units) and sum. Returns α = 2^(m − m'), by which the row's output accumulator must be scaled.
template <class T>
inline float softmax_row(float* s, int64_t first, int64_t visible, int64_t n_pad, float c, float& m, float& l) {
  for (int64_t j = 0; j < first; ++j) s[j] = neg_inf();
  for (int64_t j = visible; j < n_pad; ++j) s[j] = neg_inf();
  typename T::vec vmax = T::set1(neg_inf());
  for (int64_t j = 0; j < n_pad; j += T::W) vmax = T::max(vmax, T::load(s + j));
  const float m_new = max_f(m, T::reduce_max(vmax) * c);  // c > 0: max(c·s) = c·max(s)
  const float alpha = T::first(T::exp2(T::set1(m - m_new)));
  const typename T::vec vc = T::set1(c), vneg_m = T::set1(-m_new);
  typename T::vec vsum = T::zero();
  for (int64_t j = 0; j < n_pad; j += T::W) {
    const typename T::vec e = T::exp2(T::fma(T::load(s + j), vc, vneg_m));
    T::store(s + j, e);
    vsum = T::add(vsum, e);
  }
  // exp2 of −∞ is clamped, not exactly 0: the masked tail must not reach P·V at all.
  float tail = 0;
  for (int64_t j = 0; j < first; ++j) {
    tail += s[j];
    s[j] = 0;
  }
  for (int64_t j = visible; j < n_pad; ++j) {
    tail += s[j];
    s[j] = 0;
  }
  l = l * alpha + (T::reduce_add(vsum) - tail);
  m = m_new;
  return alpha;
}

template <class T>
inline void scale_row(float* o, int64_t d, float alpha) {
  const typename T::vec va = T::set1(alpha);
  for (int64_t j = 0; j < d; j += T::W) T::store(o + j, T::mul(T::load(o + j), va));
}

// Writes out = O / l for the tile's rows, in the output's dtype.
inline void write_rows(const flash_problem& p, int64_t b, int64_t h, int64_t i0, int64_t rows, const float* o,
                       const float* l) {
  const int64_t d = p.head_dim;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t off = b * p.o_stride[0] + h * p.o_stride[1] + (i0 + r) * p.o_stride[2];
    const float inv = l[r] > 0 ? 1.0f / l[r] : 0.0f;  // a row with no visible key (a pad query) is 0
    if (p.bf16) {
      uint16_t* dst = static_cast<uint16_t*>(p.out) + off;
      for (int64_t j = 0; j < d; ++j) dst[j] = float_to_bf16(o[r * d + j] * inv);
    } else {
      float* dst = static_cast<float*>(p.out) + off;
      for (int64_t j = 0; j < d; ++j) dst[j] = o[r * d + j] * inv;
    }
  }
}

// --- the fp32-compute path (fp32 inputs, or bf16 inputs widened to fp32) -------------------
// k_packed: per (b, h) and key block, the block's Kᵀ as a (head_dim × block_k) panel, zero past
// the last real key up to the vector width. v_packed (bf16 inputs only): V widened, (seq × d).
inline int64_t f32_k_packed_bytes(const flash_problem& p) {
  return p.batch * kv_head_count(p) * blocks_k(p) * p.head_dim * p.block_k * 4;
}
inline int64_t f32_v_packed_bytes(const flash_problem& p) {
  return p.bf16 ? p.batch * kv_head_count(p) * p.seq * p.head_dim * 4 : 0;
}
// Scores (BQ × block_k), output accumulator and widened queries (BQ × d each), m and l.
inline int64_t f32_scratch_floats(const flash_problem& p) {
  return flash_block_q * (p.block_k + 2 * p.head_dim + 2);
}

inline float load_element(const flash_problem& p, const void* base, int64_t index) {
  return p.bf16 ? bf16_to_float(static_cast<const uint16_t*>(base)[index]) : static_cast<const float*>(base)[index];
}

// Keys before the sample's first real key are packed as zeros: never read.
template <class T>
void f32_pack(const flash_problem& p, int64_t bkv) {
  const int64_t kvh = kv_head_count(p), b = bkv / kvh, g = bkv % kvh, d = p.head_dim, bk = p.block_k;
  const int64_t len = key_length(p, b), begin = key_begin(p, b);
  const int64_t k_base = b * p.k_stride[0] + g * p.k_stride[1];
  float* panels = static_cast<float*>(p.k_packed) + bkv * blocks_k(p) * d * bk;
  for (int64_t j0 = begin / bk * bk; j0 < len; j0 += bk) {
    float* panel = panels + (j0 / bk) * d * bk;  // (d, bk)
    const int64_t n = min64(bk, len - j0), n_pad = min64(bk, round_up(n, T::W));
    for (int64_t jj = 0; jj < n; ++jj) {
      const int64_t row = k_base + (j0 + jj) * p.k_stride[2];
      for (int64_t e = 0; e < d; ++e) panel[e * bk + jj] = j0 + jj < begin ? 0.0f : load_element(p, p.k, row + e);
    }
    for (int64_t e = 0; e < d; ++e)
      for (int64_t jj = n; jj < n_pad; ++jj) panel[e * bk + jj] = 0;
  }
  if (p.bf16) {
    const int64_t v_base = b * p.v_stride[0] + g * p.v_stride[1];
    float* vf = static_cast<float*>(p.v_packed) + bkv * p.seq * d;
    for (int64_t j = begin / bk * bk; j < len; ++j)
      for (int64_t e = 0; e < d; ++e)
        vf[j * d + e] = j < begin ? 0.0f : load_element(p, p.v, v_base + j * p.v_stride[2] + e);
  }
}

template <class T>
void f32_tile(const flash_problem& p, int64_t bh, int64_t q_tile, float* scratch) {
  const int64_t b = bh / p.heads, h = bh % p.heads, d = p.head_dim, bk = p.block_k;
  const int64_t bkv = kv_index(p, bh), g = bkv % kv_head_count(p);
  const int64_t i0 = q_tile * flash_block_q, rows = min64(flash_block_q, query_rows(p) - i0);
  const tile_keys keys = keys_for_tile(p, b, i0, rows);
  const float c = p.scale * 1.4426950408889634f;  // log2(e)
  float* s = scratch;                   // (BQ, bk)
  float* o = s + flash_block_q * bk;    // (BQ, d)
  float* qf = o + flash_block_q * d;    // (BQ, d)
  float* m = qf + flash_block_q * d;    // (BQ)
  float* l = m + flash_block_q;         // (BQ)

  const float* q;
  int64_t ldq;
  const int64_t q_base = b * p.q_stride[0] + h * p.q_stride[1] + i0 * p.q_stride[2];
  if (p.bf16) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t e = 0; e < d; ++e) qf[r * d + e] = load_element(p, p.q, q_base + r * p.q_stride[2] + e);
    q = qf;
    ldq = d;
  } else {
    q = static_cast<const float*>(p.q) + q_base;
    ldq = p.q_stride[2];
  }
  const float* v;
  int64_t ldv;
  if (p.bf16) {
    v = static_cast<const float*>(p.v_packed) + bkv * p.seq * d;
    ldv = d;
  } else {
    v = static_cast<const float*>(p.v) + b * p.v_stride[0] + g * p.v_stride[1];
    ldv = p.v_stride[2];
  }
  const float* panels = static_cast<const float*>(p.k_packed) + bkv * blocks_k(p) * d * bk;
  for (int64_t r = 0; r < rows; ++r) {
    m[r] = neg_inf();
    l[r] = 0;
  }
  for (int64_t x = 0; x < rows * d; ++x) o[x] = 0;

  for (int64_t j0 = keys.j_start; j0 < keys.end; j0 += bk) {
    const int64_t n = min64(bk, keys.end - j0), n_pad = round_up(n, T::W);
    gemm<T, T::qk_mr, T::qk_nv>(rows, n_pad, d, q, ldq, panels + (j0 / bk) * d * bk, bk, s, bk, false);
    for (int64_t r = 0; r < rows; ++r) {
      float* sr = s + r * bk;
      int64_t lo, hi;
      visible_in_block(p, keys, i0 + r, j0, n, lo, hi);
      if (hi <= lo) {  // a row whose keys in this block all lie after it (causal) or before the first real one
        for (int64_t j = 0; j < n_pad; ++j) sr[j] = 0;
        continue;
      }
      const float alpha = softmax_row<T>(sr, lo, hi, n_pad, c, m[r], l[r]);
      if (alpha != 1.0f && !p.planted_skip_rescale) scale_row<T>(o + r * d, d, alpha);
    }
    // Keys before the first real one have p = 0 and are not read: V there may hold anything.
    const int64_t first = max64(0, keys.begin - j0);
    gemm<T, T::pv_mr, T::pv_nv>(rows, d, n - first, s + first, bk, v + (j0 + first) * ldv, ldv, o, d, true);
  }
  write_rows(p, b, h, i0, rows, o, l);
}

template <class T>
flash_kernel f32_kernel(flash_isa isa) {
  flash_kernel k;
  k.isa = isa;
  k.vector_width = T::W;
  k.k_packed_bytes = f32_k_packed_bytes;
  k.v_packed_bytes = f32_v_packed_bytes;
  k.scratch_floats = f32_scratch_floats;
  k.pack = f32_pack<T>;
  k.tile = f32_tile<T>;
  return k;
}

}  // namespace
}  // namespace attnbench::kernels
