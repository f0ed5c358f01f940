// The plain-data interface between the CPU flash-attention dispatcher (flash_attention.cpp, which
// sees LibTorch) and its per-instruction-set code paths (flash_tile_*.cpp, which see nothing but
// this header and their intrinsics). The code paths are compiled with their own -m flags; keeping
// LibTorch and the standard library's templates out of them means no inline function compiled
// for AVX-512 can be merged by the linker into code that runs on an AVX2-only CPU.
#pragma once

#include <cstdint>

namespace attnbench::kernels {

// Query rows per task: 64 rows × 256 keys of fp32 scores is 64 KiB, which stays in L2 next to
// the key panel while the softmax and the P·V product read it back.
inline constexpr int64_t flash_block_q = 64;
// Keys per block (fewer when the sequence is shorter, rounded up to 32).
inline constexpr int64_t flash_block_k = 256;

// The code paths, best last. The dispatcher runs the best one the CPU has unless told otherwise.
enum class flash_isa { scalar, avx2, avx512, avx512_bf16, amx_bf16 };

// One call: q and out are (batch, heads, q_seq, head_dim), k and v (batch, kv_heads, seq,
// head_dim), head_dim contiguous and the other three dimensions at the given element strides. All
// four are fp32, or all bf16. An encoder has q_seq = seq and kv_heads = heads; a decoder step
// against its KV cache has the T newest positions as queries (q_seq = T ≤ seq) and, with
// grouped-query attention, heads / kv_heads query heads per key/value head.
struct flash_problem {
  int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
  int64_t q_seq = 0;     // query rows; 0: seq. Causal rows align bottom-right: row i sees keys ≤ i + seq − q_seq
  int64_t kv_heads = 0;  // key/value heads, dividing heads; 0: heads
  int64_t block_k = flash_block_k;
  bool bf16 = false;
  bool causal = false;
  float scale = 1.0f;  // applied to q·kᵀ before the softmax: 1/√head_dim
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  int64_t q_stride[3] = {0, 0, 0};  // batch, head, seq
  int64_t k_stride[3] = {0, 0, 0};
  int64_t v_stride[3] = {0, 0, 0};
  int64_t o_stride[3] = {0, 0, 0};
  // (batch) real keys per sample, each in [1, seq]; keys from key_lengths[b] on are padding and
  // are never read. nullptr: every key is real.
  const int64_t* key_lengths = nullptr;
  // (batch) first real key per sample (left padding), each < its key length; keys before it are
  // never read, and a query row with no visible key at all is written as zeros. nullptr: 0.
  const int64_t* key_begins = nullptr;
  // Filled per (batch, kv head) by `pack` before any tile runs, in the layout of the code path.
  void* k_packed = nullptr;
  void* v_packed = nullptr;
  // Fault injection for tests/kernels only: leave the output accumulator unscaled when a row's
  // running max grows, the classic online-softmax bug the validation must catch.
  bool planted_skip_rescale = false;
};

// One code path. pack runs once per (batch, kv head) — bkv = b·kv_heads + g — and tile once per
// (batch, head, query tile), bh = b·heads + h; tiles of one call may run concurrently, each with
// its own scratch.
struct flash_kernel {
  flash_isa isa = flash_isa::scalar;
  int64_t vector_width = 1;  // fp32 lanes: head_dim must be a multiple of it
  int64_t (*k_packed_bytes)(const flash_problem&) = nullptr;
  int64_t (*v_packed_bytes)(const flash_problem&) = nullptr;
  int64_t (*scratch_floats)(const flash_problem&) = nullptr;
  void (*pack)(const flash_problem&, int64_t bkv) = nullptr;
  void (*tile)(const flash_problem&, int64_t bh, int64_t q_tile, float* scratch) = nullptr;
};

flash_kernel flash_kernel_scalar();
flash_kernel flash_kernel_avx2();
flash_kernel flash_kernel_avx512();
flash_kernel flash_kernel_avx512_bf16();
flash_kernel flash_kernel_amx_bf16();
// The AMX path's code with every tile instruction replaced by plain loops (flash_tile_amx.cpp): for
// the tests only, on a CPU with AVX512_BF16, to check that path's layouts and bounds without AMX.
flash_kernel flash_kernel_amx_tile_model();

}  // namespace attnbench::kernels
