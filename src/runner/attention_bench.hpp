// `attnbench attention`: the attention implementations (attention_impls.hpp) alone, over a grid
// of (batch, heads, seq, head_dim, causal, dtype).
//
// Per point, fresh random q, k, v (N(0, 1), seeded per point) and their float64 reference. Per
// implementation, in this order:
//   1. unavailable on this device → unsupported, not run;
//   2. materialised scores over the memory cap → OOM, not run (a cap, not a real allocation
//      failure: it lets a CPU grid reach naive's limit without exhausting the machine);
//   3. one call, validated: ‖out − ref‖ / ‖ref‖ must be ≤ the dtype's tolerance (NaN never is)
//      → otherwise FAIL, not timed; LibTorch's out-of-memory error → OOM; another LibTorch
//      refusal (no kernel for these inputs) → unsupported;
//   4. one call under the peak-memory tracker, `warmup` untimed calls, `repetitions` timed
//      samples. On CUDA a sample is N back-to-back calls between two events, divided by N, with
//      N from one call timed first (calls_per_sample), all queued behind a spin kernel that holds
//      the GPU until the host has queued them: the figure is the kernels' time, not the host's
//      dispatch, even where a call's kernels are shorter than its dispatch (S=512, B=1).
// Napkin math: forward FLOPs 4·B·H·S²·D (halved when causal), TFLOP/s = FLOPs / median time.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "report/attention_table.hpp"

namespace attnbench {

// Tolerances of the relative L2 error against float64, per input dtype.
inline constexpr double attention_tolerance_fp32 = 1e-5;  // fp32 accumulation over S ≤ 64k keys: ~1e-7 seen
inline constexpr double attention_tolerance_bf16 =
    3e-2;  // 8-bit mantissa: 2^-8 ≈ 3.9e-3 per rounding, 3 roundings
inline constexpr double attention_tolerance_fp16 =
    1e-2;  // 11-bit mantissa: 2^-11 ≈ 4.9e-4 per rounding, margin

// Defaults of `attnbench attention`: BERT-base's attention shape (12 heads of 64) over the
// sequence lengths of the profile benchmark.
inline constexpr int64_t attention_default_batch = 1;      // one sequence: latency-bound inference
inline constexpr int64_t attention_default_heads = 12;     // BERT-base
inline constexpr int64_t attention_default_head_dim = 64;  // BERT-base
inline constexpr std::array<int64_t, 5> attention_default_seq{128, 256, 512, 1024, 2048};
inline constexpr int64_t attention_default_warmup = 1;       // absorbs first-call kernel selection
inline constexpr int64_t attention_default_repetitions = 5;  // a median, in seconds on a CPU
// On the CPU, naive's scores and probabilities may use at most 1 GiB: S = 4096 at B·H = 12 in
// fp32 needs 1.5 GiB and is reported OOM, without taking memory from a shared machine. On CUDA
// no cap: the device's real out-of-memory error is caught and reported.
inline constexpr int64_t attention_default_cpu_memory_cap = int64_t{1} << 30;

// On CUDA a timed sample lasts about this long (N calls), at most this many calls.
inline constexpr double attention_sample_target_ms = 2.0;
inline constexpr int64_t attention_max_calls_per_sample = 200;

// Back-to-back calls per timed sample: ⌈target / one call⌉ in [1, max_calls]; max_calls when the
// one call measured no time (or NaN). Pure.
int64_t calls_per_sample(double one_call_ms, double target_ms, int64_t max_calls);

double attention_tolerance(const std::string& dtype);
c10::ScalarType attention_dtype(
    const std::string& dtype);  // "fp32" | "bf16" | "fp16"; throws input_error else

// The grid: one list per dimension; the points are their cartesian product.
struct attention_grid {
  std::vector<int64_t> batch;
  std::vector<int64_t> heads;
  std::vector<int64_t> seq;
  std::vector<int64_t> head_dim;
  std::vector<bool> causal;
  std::vector<std::string> dtype;
  std::vector<double> valid{1.0};  // shares of real keys (attention_point::valid)
};

// Ordered dtype, causal, batch, heads, head_dim outermost and seq innermost, so a table reads
// as "how each implementation scales with sequence length".
std::vector<attention_point> grid_points(const attention_grid& grid);

struct attention_bench_options {
  attention_grid grid;
  std::vector<std::string> impls;  // names to run; empty: those of attention_impls() the device can run
  int64_t warmup = 1;
  int64_t repetitions = 5;
  int64_t memory_cap_bytes = 0;  // 0: no cap
  uint64_t seed = 0;
  torch::Device device = torch::kCPU;
  // Measured matmul ceilings per dtype (attention_row::ceiling_share); empty: none.
  std::vector<attention_ceiling> ceilings;
  std::function<void(const std::string&)> log;  // may be empty
};

// One row per point × implementation, in grid order, implementations in registry order.
std::vector<attention_row> run_attention_bench(const attention_bench_options& options);

}  // namespace attnbench
