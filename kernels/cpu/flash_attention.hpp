// cpu-flash: attnbench's own CPU flash-attention forward (kernels/README.md).
//
// What it computes: softmax(q·kᵀ/√d [+ causal] [+ key padding])·v for q, k, v of shape
// (B, H, S, D), fp32 or bf16 (bf16 with fp32 accumulation), never materialising the S×S scores —
// the FlashAttention tiling and online softmax (the recurrence: flash_tile_impl.hpp).
// Key padding is given as per-sample key lengths, so padded keys cost no work at all; LibTorch's
// SDPA takes a boolean mask instead and computes every key.
//
// Code paths, chosen at run time from the CPU's features (one binary runs on any x86-64):
//   amx_bf16     bf16 inputs, head_dim a multiple of 32, on CPUs with AMX tiles (Sapphire Rapids
//                and later): Q·Kᵀ and P·V on the tile unit, the softmax in AVX-512. It runs only
//                after agreeing with avx512_bf16 on a small problem once per process (a path not
//                validated on this project's machines when written must not corrupt a run);
//   avx512_bf16  bf16 inputs on CPUs with AVX512_BF16 (vdpbf16ps);
//   avx512       fp32 (and bf16 widened) on CPUs with AVX-512 F/BW/VL/DQ;
//   avx2         AVX2 + FMA;
//   scalar       anything, and any head_dim.
// ATTNBENCH_CPU_ISA=scalar|avx2|avx512|avx512_bf16|amx_bf16 caps the choice (to see what an older CPU
// would run); a path the CPU lacks is an error, not a silent fallback.
//
// Parallel over (batch, head, query tile) with at::parallel_for, the tiles dealt out
// longest-first so that padded samples and causal rows do not leave a thread idle.
//
// Run it: `attnbench attention --impl naive,sdpa-flash,cpu-flash --seq 1024,2048 --dtype fp32,bf16`,
// or `"attention": "custom"` in a variant (src/model/attention.cpp). Validated against the
// float64 reference before anything times it (tests/kernels/test_flash_attention.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "kernels/cpu/flash_problem.hpp"
#include "kernels/attention_impl.hpp"

namespace attnbench {

std::string to_string(kernels::flash_isa isa);  // "scalar", "avx2", "avx512", "avx512_bf16", "amx_bf16"

// The code paths this CPU can run, in order scalar … best.
std::vector<kernels::flash_isa> cpu_flash_isas();

// Why this CPU's AMX is not used ("amx_bf16 not used: …"), or "" (no AMX, or AMX in use).
std::string cpu_flash_amx_note();

// The path a call takes on a CPU whose paths are `available` (cpu_flash_isas()'s order): `requested`
// when given (an error if unavailable), else the best; then the best at or below it that suits the
// inputs: fp32 never takes a bf16 path, amx_bf16 needs head_dim % 32 == 0 (else avx512_bf16), and a
// head_dim no vector width divides falls back to avx2 or scalar. Pure: tests inject machines.
kernels::flash_isa choose_flash_path(const std::vector<kernels::flash_isa>& available, c10::ScalarType dtype,
                                     int64_t head_dim, std::optional<kernels::flash_isa> requested);

// The path a call with this dtype and head_dim takes: `requested`, else ATTNBENCH_CPU_ISA, else
// the best the CPU has; then the best of those at or below it that suits the inputs (fp32 never
// takes avx512_bf16; a head_dim that is not a multiple of a path's vector width falls back).
// Throws c10::Error naming the path when one is requested that the CPU cannot run.
kernels::flash_isa cpu_flash_path(c10::ScalarType dtype, int64_t head_dim,
                                  std::optional<kernels::flash_isa> requested = std::nullopt);

struct cpu_flash_options {
  std::optional<kernels::flash_isa> isa;  // the code path to run (default: cpu_flash_path's choice)
  // Fault injection for the validation tests only: skip the rescale of the output accumulator
  // when a row's running max grows (flash_problem::planted_skip_rescale).
  bool planted_skip_rescale = false;
  // Tests only: run the AMX path's code on its plain-loop tile model (an AVX512_BF16 CPU, bf16,
  // head_dim % 32 == 0), to check its layouts without AMX.
  bool amx_tile_model = false;
};

// q, k, v: (B, H, S, D), fp32 or bf16, on the CPU, the last dimension contiguous. key_lengths:
// undefined, or (B) integers in [1, S]. Returns (B, H, S, D) in q's dtype, laid out (B, S, H, D)
// in memory so that the model's transpose back to (B, S, H·D) is free. Forward only: it refuses
// inputs that require grad while grad mode is on.
torch::Tensor cpu_flash_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                  const torch::Tensor& key_lengths = {}, const cpu_flash_options& options = {});

// A decoder's call against its KV cache: q (B, H, T, D) are the T newest positions, k and v
// (B, Hkv, S, D) every cached position, T ≤ S and H a multiple of Hkv (grouped-query attention:
// query head h reads key/value head h / (H / Hkv), with no copy). Causal rows align bottom-right:
// query i sees keys [0, S − T + i]. key_begins: undefined, or (B) each sample's first real key
// (a left-padded batch): keys before it are never read, and a query row that sees no key at all
// (a pad position) comes out as zeros. Returns (B, H, T, D) in q's dtype, laid out (B, T, H, D).
torch::Tensor cpu_flash_attention_cached(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                         bool causal, const torch::Tensor& key_begins = {},
                                         const cpu_flash_options& options = {});

// The registry entry "cpu-flash" (kernels/attention_impl.hpp, listed by model/attention_impls.hpp).
attention_impl cpu_flash_attention_impl();

}  // namespace attnbench
