// CPU flash attention, AMX code path: bf16 inputs multiplied on the AMX tile unit (TDPBF16PS: a
// 16 × 16 fp32 tile += a 16 × 32 bf16 tile · a 32 × 16 bf16 tile held as 16 rows of bf16 pairs),
// the online softmax in fp32 with AVX-512, P rounded to bf16 as the avx512_bf16 path and
// LibTorch's CPU flash kernel do. Compiled with -mamx-tile -mamx-bf16 on top of the AVX512_BF16
// flags and run only when the CPU reports amx_tile and amx_bf16 and the kernel has granted this
// process the tile data state (the dispatcher, flash_attention.cpp, asks: arch_prctl).
//
// The operands are the avx512_bf16 path's pair layouts, which are exactly the tile unit's:
//   S = Q·Kᵀ  A = Q rows (16 × 32 bf16: 32 of head_dim), B = the block's Kᵀ panel (16 pair-rows of
//             head_dim × 16 keys), C = S (16 rows × 16 keys fp32);
//   O += P·V  A = P rows (16 × 32 keys bf16), B = V packed in key pairs (16 pair-rows × 16 of
//             head_dim), C = O (16 rows × 16 of head_dim fp32), loaded, accumulated and stored back,
//             so the online-softmax rescale stays a vector loop over O in memory.
// Every tile is 16 rows × 64 bytes, so one tile configuration serves both products. The register
// blocking is 2 × 2 C tiles (tmm0-3) from two A tiles (tmm4-5) and two B tiles (tmm6-7): 32 rows
// × 32 columns per pass over the reduction, each loaded tile used twice.
//
// Shapes the tiles impose, and what this file does about them:
//   head_dim   a multiple of 32 (the dispatcher sends any other head_dim to avx512_bf16);
//   rows       the tile's query rows are copied into a zero-padded 64-row buffer;
//   keys       each block's Kᵀ panel is zero-padded to a multiple of 32 keys (block_k is one), and
//              V's pair-rows are zero past the last real key up to a multiple of 32 keys, so the
//              padded part of P (zero) never meets uninitialised memory (0 × NaN would be NaN).
//
// The kernel is written once over a tile-operation policy: `amx_ops` issues the instructions;
// `tile_model_ops` computes the same tile operations with plain loops, and exists only so that the
// tests can check this file's layouts, padding and loop bounds on a CPU without AMX
// (tests/kernels/test_flash_attention.cpp). The model validates the code around the instructions,
// never the instructions: the AMX path itself is validated only on a CPU that has AMX, and is
// timed only there (kernels/README.md).
#include "flash_tile_impl.hpp"

#include "avx512_traits.hpp"

namespace attnbench::kernels {
namespace {

using T = avx512_traits;
constexpr int64_t tile_rows = 16;
constexpr int64_t tile_k = 32;  // bf16 values along the reduction per tile (16 pairs, 64 bytes)

// The tile configuration LDTILECFG reads (palette 1): bytes per row and rows of each tile.
struct alignas(64) tile_config {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

tile_config every_tile_16x64() {
  tile_config c;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = 16;
  }
  return c;
}

// GCC's tile intrinsics paste their tile number into the instruction's text, so it must be a
// literal: each template below picks the literal for its number.
#define ATTNBENCH_TILE_CASES(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

struct amx_ops {
  static void configure() {
    static const tile_config config = every_tile_16x64();
    _tile_loadconfig(&config);
  }
  static void release() { _tile_release(); }
  template <int Tmm>
  static void zero() {
#define ATTNBENCH_TILE_ZERO(n) if constexpr (Tmm == n) _tile_zero(n);
    ATTNBENCH_TILE_CASES(ATTNBENCH_TILE_ZERO)
#undef ATTNBENCH_TILE_ZERO
  }
  template <int Tmm>
  static void load(const void* p, int64_t stride_bytes) {
#define ATTNBENCH_TILE_LOAD(n) if constexpr (Tmm == n) _tile_loadd(n, p, stride_bytes);
    ATTNBENCH_TILE_CASES(ATTNBENCH_TILE_LOAD)
#undef ATTNBENCH_TILE_LOAD
  }
  template <int Tmm>
  static void store(void* p, int64_t stride_bytes) {
#define ATTNBENCH_TILE_STORE(n) if constexpr (Tmm == n) _tile_stored(n, p, stride_bytes);
    ATTNBENCH_TILE_CASES(ATTNBENCH_TILE_STORE)
#undef ATTNBENCH_TILE_STORE
  }
  // The four products tile_gemm issues: C tiles 0-3 from A tiles 4-5 and B tiles 6-7.
  template <int C, int A, int B>
  static void dot() {
    static_assert((C == 0 && A == 4 && B == 6) || (C == 1 && A == 4 && B == 7) || (C == 2 && A == 5 && B == 6) ||
                      (C == 3 && A == 5 && B == 7),
                  "tile_gemm's blocking uses these four products only");
    if constexpr (C == 0) _tile_dpbf16ps(0, 4, 6);
    if constexpr (C == 1) _tile_dpbf16ps(1, 4, 7);
    if constexpr (C == 2) _tile_dpbf16ps(2, 5, 6);
    if constexpr (C == 3) _tile_dpbf16ps(3, 5, 7);
  }
};
#undef ATTNBENCH_TILE_CASES

// The same operations on eight 16 × 64-byte buffers, with TDPBF16PS's definition:
//   C[m][n] += Σ_k A[m][2k]·B[k][2n] + A[m][2k+1]·B[k][2n+1]   (products exact, sums in fp32).
struct tile_model_ops {
  struct state {
    uint8_t tiles[8][16][64];
  };
  static state& tiles() {
    static thread_local state s;
    return s;
  }
  static void configure() {}
  static void release() {}
  template <int Tmm>
  static void zero() {
    __builtin_memset(tiles().tiles[Tmm], 0, sizeof tiles().tiles[Tmm]);
  }
  template <int Tmm>
  static void load(const void* p, int64_t stride_bytes) {
    for (int r = 0; r < 16; ++r)
      __builtin_memcpy(tiles().tiles[Tmm][r], static_cast<const uint8_t*>(p) + r * stride_bytes, 64);
  }
  template <int Tmm>
  static void store(void* p, int64_t stride_bytes) {
    for (int r = 0; r < 16; ++r) __builtin_memcpy(static_cast<uint8_t*>(p) + r * stride_bytes, tiles().tiles[Tmm][r], 64);
  }
  template <int C, int A, int B>
  static void dot() {
    auto& t = tiles().tiles;
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 16; ++n) {
        float acc;
        __builtin_memcpy(&acc, &t[C][m][4 * n], 4);
        for (int k = 0; k < 16; ++k) {
          uint16_t a[2], b[2];
          __builtin_memcpy(a, &t[A][m][4 * k], 4);
          __builtin_memcpy(b, &t[B][k][4 * n], 4);
          acc += bf16_to_float(a[0]) * bf16_to_float(b[0]) + bf16_to_float(a[1]) * bf16_to_float(b[1]);
        }
        __builtin_memcpy(&t[C][m][4 * n], &acc, 4);
      }
  }
};

// C (rows_pad × n) fp32 = or += A (rows_pad × k bf16) · B (k/2 pair-rows × n, in words); rows_pad,
// n and k multiples of 32. lda in bf16 elements, ldb in words, ldc in floats.
template <class Ops>
void tile_gemm(int64_t rows_pad, int64_t n, int64_t k, const uint16_t* a, int64_t lda, const uint32_t* b, int64_t ldb,
               float* c, int64_t ldc, bool accumulate) {
  for (int64_t r0 = 0; r0 < rows_pad; r0 += 2 * tile_rows)
    for (int64_t j = 0; j < n; j += 32) {
      float* c00 = c + r0 * ldc + j;
      float* c01 = c00 + 16;
      float* c10 = c00 + tile_rows * ldc;
      float* c11 = c10 + 16;
      if (accumulate) {
        Ops::template load<0>(c00, ldc * 4);
        Ops::template load<1>(c01, ldc * 4);
        Ops::template load<2>(c10, ldc * 4);
        Ops::template load<3>(c11, ldc * 4);
      } else {
        Ops::template zero<0>();
        Ops::template zero<1>();
        Ops::template zero<2>();
        Ops::template zero<3>();
      }
      for (int64_t k0 = 0; k0 < k; k0 += tile_k) {
        Ops::template load<4>(a + r0 * lda + k0, lda * 2);
        Ops::template load<5>(a + (r0 + tile_rows) * lda + k0, lda * 2);
        Ops::template load<6>(b + (k0 / 2) * ldb + j, ldb * 4);
        Ops::template load<7>(b + (k0 / 2) * ldb + j + 16, ldb * 4);
        Ops::template dot<0, 4, 6>();
        Ops::template dot<1, 4, 7>();
        Ops::template dot<2, 5, 6>();
        Ops::template dot<3, 5, 7>();
      }
      Ops::template store<0>(c00, ldc * 4);
      Ops::template store<1>(c01, ldc * 4);
      Ops::template store<2>(c10, ldc * 4);
      Ops::template store<3>(c11, ldc * 4);
    }
}

// V's pair-rows per (b, h): enough for every key rounded up to 32.
inline int64_t v_pair_rows(const flash_problem& p) { return round_up(p.seq, 32) / 2; }

int64_t amx_k_packed_bytes(const flash_problem& p) {
  return p.batch * kv_head_count(p) * blocks_k(p) * (p.head_dim / 2) * p.block_k * 4;
}
int64_t amx_v_packed_bytes(const flash_problem& p) {
  return p.batch * kv_head_count(p) * v_pair_rows(p) * p.head_dim * 4;
}
// S (64 × bk) fp32, P (64 × bk) bf16, O (64 × d) fp32, Q (64 × d) bf16, m and l.
int64_t amx_scratch_floats(const flash_problem& p) {
  return flash_block_q * (p.block_k + p.block_k / 2 + p.head_dim + p.head_dim / 2 + 2);
}

// Keys (and values) before the sample's first real key are packed as zeros: never read.
void amx_pack(const flash_problem& p, int64_t bkv) {
  const int64_t kvh = kv_head_count(p), b = bkv / kvh, g = bkv % kvh, d = p.head_dim, bk = p.block_k;
  const int64_t len = key_length(p, b), begin = key_begin(p, b), j_start = begin / bk * bk;
  pack_k_pair_panels(p, bkv, 32);
  const uint16_t* v = static_cast<const uint16_t*>(p.v) + b * p.v_stride[0] + g * p.v_stride[1];
  uint32_t* vw = static_cast<uint32_t*>(p.v_packed) + bkv * v_pair_rows(p) * d;  // (pair-rows, d) words
  const int64_t real_pairs = (len + 1) / 2;
  for (int64_t u = j_start / 2; u < real_pairs; ++u) {
    const uint16_t* lo = 2 * u >= begin ? v + 2 * u * p.v_stride[2] : nullptr;
    const uint16_t* hi = 2 * u + 1 < len && 2 * u + 1 >= begin ? v + (2 * u + 1) * p.v_stride[2] : nullptr;
    for (int64_t e = 0; e < d; ++e)
      vw[u * d + e] = (lo ? static_cast<uint32_t>(lo[e]) : 0u) | (hi ? static_cast<uint32_t>(hi[e]) << 16 : 0u);
  }
  for (int64_t u = real_pairs; u < round_up(len, 32) / 2; ++u)
    for (int64_t e = 0; e < d; ++e) vw[u * d + e] = 0;
}

template <class Ops>
void amx_tile(const flash_problem& p, int64_t bh, int64_t q_tile, float* scratch) {
  const int64_t b = bh / p.heads, h = bh % p.heads, d = p.head_dim, bk = p.block_k, half = d / 2;
  const int64_t bkv = kv_index(p, bh);
  const int64_t i0 = q_tile * flash_block_q, rows = min64(flash_block_q, query_rows(p) - i0);
  const int64_t rows_pad = round_up(rows, 2 * tile_rows);
  const tile_keys keys = keys_for_tile(p, b, i0, rows);
  const float c = p.scale * 1.4426950408889634f;  // log2(e)
  float* s = scratch;                                                   // (BQ, bk) fp32
  uint16_t* pb = reinterpret_cast<uint16_t*>(s + flash_block_q * bk);   // (BQ, bk) bf16
  float* o = s + flash_block_q * (bk + bk / 2);                         // (BQ, d) fp32
  uint16_t* qb = reinterpret_cast<uint16_t*>(o + flash_block_q * d);    // (BQ, d) bf16
  float* m = o + flash_block_q * (d + half);                            // (BQ)
  float* l = m + flash_block_q;                                         // (BQ)

  // The tile's query rows, zero past the last: the A operand of Q·Kᵀ.
  const uint16_t* q = static_cast<const uint16_t*>(p.q) + b * p.q_stride[0] + h * p.q_stride[1] + i0 * p.q_stride[2];
  for (int64_t r = 0; r < rows_pad; ++r)
    for (int64_t e = 0; e < d; ++e) qb[r * d + e] = r < rows ? q[r * p.q_stride[2] + e] : uint16_t{0};
  // Rows past the last are never given a P: zero, for every block.
  for (int64_t r = rows; r < rows_pad; ++r)
    for (int64_t j = 0; j < bk; ++j) pb[r * bk + j] = 0;
  for (int64_t r = 0; r < rows_pad; ++r) {
    m[r] = neg_inf();
    l[r] = 0;
  }
  for (int64_t x = 0; x < rows_pad * d; ++x) o[x] = 0;

  const uint32_t* panels = static_cast<const uint32_t*>(p.k_packed) + bkv * blocks_k(p) * half * bk;
  const uint32_t* vw = static_cast<const uint32_t*>(p.v_packed) + bkv * v_pair_rows(p) * d;
  Ops::configure();
  for (int64_t j0 = keys.j_start; j0 < keys.end; j0 += bk) {
    const int64_t n = min64(bk, keys.end - j0), n_pad = round_up(n, 32);
    tile_gemm<Ops>(rows_pad, n_pad, d, qb, d, panels + (j0 / bk) * half * bk, bk, s, bk, false);
    for (int64_t r = 0; r < rows; ++r) {
      float* sr = s + r * bk;
      uint16_t* pr = pb + r * bk;
      int64_t lo, hi;
      visible_in_block(p, keys, i0 + r, j0, n, lo, hi);
      if (hi <= lo) {  // a row whose keys in this block all lie after it (causal) or before the first real one
        for (int64_t j = 0; j < n_pad; ++j) pr[j] = 0;
        continue;
      }
      const float alpha = softmax_row<T>(sr, lo, hi, n_pad, c, m[r], l[r]);
      if (alpha != 1.0f && !p.planted_skip_rescale) scale_row<T>(o + r * d, d, alpha);
      for (int64_t j = 0; j < n_pad; j += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pr + j), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(sr + j)));
    }
    // j0 is a multiple of bk, which is even: block j0's first pair is pair-row j0/2 of V.
    tile_gemm<Ops>(rows_pad, d, n_pad, pb, bk, vw + (j0 / 2) * d, d, o, d, true);
  }
  Ops::release();
  write_rows(p, b, h, i0, rows, o, l);
}

template <class Ops>
flash_kernel amx_kernel() {
  flash_kernel k;
  k.isa = flash_isa::amx_bf16;
  k.vector_width = 32;  // head_dim: a multiple of one tile's reduction
  k.k_packed_bytes = amx_k_packed_bytes;
  k.v_packed_bytes = amx_v_packed_bytes;
  k.scratch_floats = amx_scratch_floats;
  k.pack = amx_pack;
  k.tile = amx_tile<Ops>;
  return k;
}

}  // namespace

flash_kernel flash_kernel_amx_bf16() { return amx_kernel<amx_ops>(); }

flash_kernel flash_kernel_amx_tile_model() { return amx_kernel<tile_model_ops>(); }

}  // namespace attnbench::kernels
