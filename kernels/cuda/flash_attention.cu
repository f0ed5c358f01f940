// cuda-flash2: a FlashAttention-2-style forward on tensor cores, fp16 and bf16, head_dim 64 and
// 128, key padding (per-sample key lengths) and causal.
//
// What it computes: out = softmax(q·kᵀ/√d [+ causal] [+ key padding])·v for (B, H, S, D) inputs,
// with fp32 accumulation and an fp32 online softmax; nothing S×S ever reaches global memory.
//
// Work split (FlashAttention-2): one CTA per (query tile of 64 rows, head, batch), 4 warps, each
// warp owning 16 query rows for the whole key loop — the warps split queries, not keys, so no
// inter-warp reduction is needed. Per block of 64 keys:
//   1. the CTA stages K and V of the block in shared memory (zeros past the last real key);
//   2. each warp computes S = Q·Kᵀ for its 16 rows with WMMA 16×16×16 MMAs, fp32 accumulators,
//      and stores S to its shared-memory slice (WMMA does not define which lane holds which
//      element, so the softmax reads S back from shared memory instead of from the fragments);
//   3. two lanes per row: mask (key ≥ length, or key > query when causal), running max m,
//      p = 2^(c·s − m'), α = 2^(m − m'), l = α·l + Σp, O = α·O, P rounded to fp16/bf16;
//   4. O += P·V with WMMA, O accumulated in fp32 in shared memory.
// At the end out = O / l. Blocks after a sample's last real key are never loaded; causal tiles
// stop at their last row and are issued heaviest first.
//
// Napkin math (S = 4096, D = 128, B·H = 32, not causal): 4·B·H·S²·D = 275 GFLOP and
// 4·B·H·S·D·2 bytes = 134 MB of q, k, v, out — compute-bound by three orders of magnitude; the
// shared-memory round trip of S and P (4 bytes + 2 bytes per score per pass) is what this
// simpler kernel pays against FlashAttention-2's register-resident softmax. kernels/README.md
// ("how fast it can be") counts it all: 122 KB of shared memory per warp and 64-key block at
// D = 128, 4.3 FLOP a byte, a bound near 60-80 TFLOP/s on an H200 (unmeasured), and the plan
// (mma.sync m16n8k16 with S/P/O in registers, Q held, cp.async double buffering, 128-row tiles).
//
// Built for sm_90 (plus PTX) by CMake when nvcc and LibTorch's CUDA build are present; validated
// against the float64 reference and LibTorch's flash backend by the [gpu] test in
// tests/kernels/test_cuda_flash_attention.cpp, timed by `attnbench attention --device cuda`.
#include "flash2_launch.hpp"

#include <atomic>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace attnbench::kernels {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int block_q = 64;   // query rows per CTA
constexpr int block_k = 64;   // keys per block
constexpr int warps = 4;      // 16 query rows each
constexpr int threads = warps * 32;
constexpr int pad_h = 8;      // 16-bit elements of row padding: WMMA needs ld % 8 == 0
constexpr int pad_f = 4;      // fp32 elements of row padding: WMMA needs ld % 4 == 0

template <class E>
__device__ inline E from_float(float x);
template <>
__device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

__host__ __device__ constexpr int round128(int bytes) { return (bytes + 127) / 128 * 128; }

template <int D>
struct layout {
  static constexpr int ld = D + pad_h;                 // Q, K, V rows (16-bit elements)
  static constexpr int lds = block_k + pad_f;          // S rows (fp32)
  static constexpr int ldp = block_k + pad_h;          // P rows (16-bit)
  static constexpr int ldo = D + pad_f;                // O rows (fp32)
  static constexpr int q_bytes = round128(block_q * ld * 2);
  static constexpr int kv_bytes = round128(block_k * ld * 2);
  static constexpr int s_bytes = round128(warps * 16 * lds * 4);
  static constexpr int p_bytes = round128(warps * 16 * ldp * 2);
  static constexpr int o_bytes = round128(warps * 16 * ldo * 4);
  static constexpr int total = q_bytes + 2 * kv_bytes + s_bytes + p_bytes + o_bytes;
};

// Copies rows [row0, row0 + rows) of a (S, D) slice into shared memory (ld elements a row), zeros
// for rows at or past `valid`.
template <class E, int D>
__device__ inline void stage_rows(E* dst, const E* src, int64_t stride, int64_t row0, int rows, int64_t valid) {
  for (int x = threadIdx.x; x < rows * D; x += threads) {
    const int r = x / D, c = x % D;
    const int64_t row = row0 + r;
    dst[r * layout<D>::ld + c] = row < valid ? src[row * stride + c] : from_float<E>(0.0f);
  }
}

template <class E, int D>
__global__ void __launch_bounds__(threads) flash2_forward(cuda_flash_problem p) {
  using L = layout<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  E* q_s = reinterpret_cast<E*>(smem);
  E* k_s = reinterpret_cast<E*>(smem + L::q_bytes);
  E* v_s = reinterpret_cast<E*>(smem + L::q_bytes + L::kv_bytes);
  float* s_all = reinterpret_cast<float*>(smem + L::q_bytes + 2 * L::kv_bytes);
  E* p_all = reinterpret_cast<E*>(smem + L::q_bytes + 2 * L::kv_bytes + L::s_bytes);
  float* o_all = reinterpret_cast<float*>(smem + L::q_bytes + 2 * L::kv_bytes + L::s_bytes + L::p_bytes);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Causal: tile t reads keys [0, 64·(t + 1)), so the last tile is the heaviest. The grid is
  // issued in blockIdx order: launching the heaviest tiles first lets the light ones fill the
  // multiprocessors at the end instead of leaving a tail of heavy tiles on a few of them.
  const int64_t tile = p.causal ? int64_t{gridDim.x} - 1 - blockIdx.x : int64_t{blockIdx.x};
  const int64_t b = blockIdx.z, h = blockIdx.y, q0 = tile * block_q;
  // Device-resident lengths are not read back on the host (that would be a sync per call): a
  // length outside [1, S] is clamped here, so no key outside the sample is ever read.
  const int64_t len = p.key_lengths ? max(int64_t{1}, min(p.seq, p.key_lengths[b])) : p.seq;
  const int64_t kv_end = p.causal ? min(len, min(p.seq, q0 + block_q)) : len;
  const float c = p.scale * 1.4426950408889634f;  // log2(e)

  const E* q = static_cast<const E*>(p.q) + b * p.q_stride[0] + h * p.q_stride[1];
  const E* k = static_cast<const E*>(p.k) + b * p.k_stride[0] + h * p.k_stride[1];
  const E* v = static_cast<const E*>(p.v) + b * p.v_stride[0] + h * p.v_stride[1];
  stage_rows<E, D>(q_s, q, p.q_stride[2], q0, block_q, p.seq);

  float* s_w = s_all + warp * 16 * L::lds;  // this warp's (16, block_k) scores
  E* p_w = p_all + warp * 16 * L::ldp;      // (16, block_k) probabilities
  float* o_w = o_all + warp * 16 * L::ldo;  // (16, D) output accumulator
  for (int x = lane; x < 16 * D; x += 32) o_w[(x / D) * L::ldo + x % D] = 0.0f;
  // Two lanes per row: lane 2r and 2r+1 own row r, columns [32·half, 32·half + 32).
  const int row = lane / 2, half = lane % 2;
  const int64_t query = q0 + warp * 16 + row;
  float m = -INFINITY, l = 0.0f;

  for (int64_t j0 = 0; j0 < kv_end; j0 += block_k) {
    __syncthreads();  // every warp is done with the previous block's K and V (and Q is staged)
    stage_rows<E, D>(k_s, k, p.k_stride[2], j0, block_k, kv_end);
    stage_rows<E, D>(v_s, v, p.v_stride[2], j0, block_k, kv_end);
    __syncthreads();
    // No "every key of the block is after this warp's rows" skip: causal kv_end ≤ q0 + 64 and
    // j0 is a multiple of 64, so j0 ≤ q0 ≤ every warp's first row; the block always holds one of
    // its keys at or before each row (issue 30 removed such a dead `continue`).

    // 2. S (16 × 64) = Q_w (16 × D) · Kᵀ (D × 64)
    for (int n = 0; n < block_k / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, E, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, E, wmma::col_major> bt;  // K rows read as Kᵀ columns
        wmma::load_matrix_sync(a, q_s + (warp * 16) * L::ld + kk * 16, L::ld);
        wmma::load_matrix_sync(bt, k_s + (n * 16) * L::ld + kk * 16, L::ld);
        wmma::mma_sync(acc, a, bt, acc);
      }
      wmma::store_matrix_sync(s_w + n * 16, acc, L::lds, wmma::mem_row_major);
    }
    __syncwarp();

    // 3. the online softmax, two lanes per row
    float* s_row = s_w + row * L::lds + half * 32;
    E* p_row = p_w + row * L::ldp + half * 32;
    float block_max = -INFINITY;
    for (int x = 0; x < 32; ++x) {
      const int64_t key = j0 + half * 32 + x;
      const bool keep = key < kv_end && (!p.causal || key <= query);
      const float s = keep ? s_row[x] * c : -INFINITY;
      s_row[x] = s;
      block_max = fmaxf(block_max, s);
    }
    block_max = fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 1));
    const float m_new = fmaxf(m, block_max);
    // A row with nothing visible yet keeps m = −∞: α = 1 and p = 0 avoid (−∞) − (−∞).
    const float alpha = m_new == -INFINITY ? 1.0f : exp2f(m - m_new);
    float sum = 0.0f;
    for (int x = 0; x < 32; ++x) {
      const float pr = m_new == -INFINITY ? 0.0f : exp2f(s_row[x] - m_new);
      p_row[x] = from_float<E>(pr);
      sum += pr;
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    l = l * alpha + sum;
    m = m_new;
    float* o_row = o_w + row * L::ldo + half * (D / 2);
    for (int x = 0; x < D / 2; ++x) o_row[x] *= alpha;
    __syncwarp();

    // 4. O (16 × D) += P (16 × 64) · V (64 × D)
    for (int n = 0; n < D / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::load_matrix_sync(acc, o_w + n * 16, L::ldo, wmma::mem_row_major);
      for (int kk = 0; kk < block_k / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, E, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, E, wmma::row_major> bv;
        wmma::load_matrix_sync(a, p_w + kk * 16, L::ldp);
        wmma::load_matrix_sync(bv, v_s + (kk * 16) * L::ld + n * 16, L::ld);
        wmma::mma_sync(acc, a, bv, acc);
      }
      wmma::store_matrix_sync(o_w + n * 16, acc, L::ldo, wmma::mem_row_major);
    }
    __syncwarp();
  }

  // out = O / l for the rows that exist.
  if (query < p.seq) {
    E* out = static_cast<E*>(p.out) + b * p.o_stride[0] + h * p.o_stride[1] + query * p.o_stride[2];
    const float inv = 1.0f / l;
    const float* o_row = o_w + row * L::ldo;
    for (int x = half * (D / 2); x < (half + 1) * (D / 2); ++x) out[x] = from_float<E>(o_row[x] * inv);
  }
}

// cudaFuncSetAttribute once per device and instantiation, not per launch (it is a driver call on
// the host path of every timed call otherwise). Devices past the 64 a mask holds set it every time.
template <class E, int D>
cudaError_t raise_shared_limit(int bytes) {
  static std::atomic<std::uint64_t> raised{0};
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  const std::uint64_t bit = device < 64 ? std::uint64_t{1} << device : 0;
  if (bit != 0 && (raised.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
  err = cudaFuncSetAttribute(flash2_forward<E, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (err == cudaSuccess && bit != 0) raised.fetch_or(bit, std::memory_order_acq_rel);
  return err;
}

template <class E, int D>
cudaError_t launch(const cuda_flash_problem& p, cudaStream_t stream) {
  constexpr int bytes = layout<D>::total;
  cudaError_t err = raise_shared_limit<E, D>(bytes);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>((p.seq + block_q - 1) / block_q), static_cast<unsigned>(p.heads),
                  static_cast<unsigned>(p.batch));
  flash2_forward<E, D><<<grid, threads, bytes, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

int cuda_flash2_forward(const cuda_flash_problem& p, void* stream, int* pending_error) {
  // An error left by earlier work (an asynchronous fault, another launch that failed) would be
  // taken and cleared by the cudaGetLastError after this launch and reported as this kernel's.
  // Take it first and hand it back as what it is; launch nothing on top of it.
  const cudaError_t pending = cudaGetLastError();
  if (pending_error) *pending_error = static_cast<int>(pending);
  if (pending != cudaSuccess) return static_cast<int>(pending);
  const auto s = static_cast<cudaStream_t>(stream);
  if (p.head_dim == 64) return p.bf16 ? launch<__nv_bfloat16, 64>(p, s) : launch<__half, 64>(p, s);
  if (p.head_dim == 128) return p.bf16 ? launch<__nv_bfloat16, 128>(p, s) : launch<__half, 128>(p, s);
  return cudaErrorInvalidValue;
}

const char* cuda_flash2_error_string(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

}  // namespace attnbench::kernels
