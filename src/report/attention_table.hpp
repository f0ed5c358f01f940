// The result record of `attnbench attention` (one row per grid point × implementation) and its
// markdown and CSV renderings. Free of LibTorch: the runner fills it, the writers only read it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace attnbench {

// One point of the grid: q, k, v are (batch, heads, seq, head_dim) in `dtype`.
struct attention_point {
  int64_t batch = 0;
  int64_t heads = 0;
  int64_t seq = 0;
  int64_t head_dim = 0;
  bool causal = false;
  std::string dtype;  // "fp32", "bf16", "fp16"
  // Share of each sample's keys that are real (the rest key padding): every sample's key length
  // is max(1, round(valid · seq)). 1: no padding, no mask.
  double valid = 1.0;
};

// The key length `valid` gives at this point.
int64_t attention_key_length(const attention_point& p);

// Forward FLOPs by the FlashAttention convention: 4·B·H·S²·D, halved when causal. With key
// padding, the work on real keys only: 4·B·H·S·L·D, causal 4·B·H·(S·L − L²/2)·D for key length L
// (what an implementation must do; one that computes padded keys does more than this).
double attention_flops(const attention_point& p);

// ok: validated and timed. FAIL: outside tolerance (or NaN) against the float64 reference, not
// timed. OOM: out of memory, or naive's scores over the configured cap. unsupported: the backend
// refused these inputs or this device.
enum class attention_status { ok, fail, oom, unsupported };
std::string to_string(attention_status s);  // "ok", "FAIL", "OOM", "unsupported"

struct attention_row {
  attention_point point;
  std::string impl;
  attention_status status = attention_status::ok;
  std::string reason;  // why not ok
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  double rel_l2 = nan;  // ‖out − ref‖ / ‖ref‖ against the float64 reference
  double tolerance = nan;
  int64_t repetitions = 0;
  double median_ms = nan;
  double min_ms = nan;
  double tflops = nan;      // attention_flops / median time
  int64_t peak_bytes = -1;  // working memory of one call (-1: not measured)
  double speedup = nan;     // naive's median ÷ this median at the same point (NaN without naive)
  // Achieved FLOP/s over the measured matmul ceiling of the point's dtype on this device (NaN when
  // no ceiling was measured).
  double ceiling_share = nan;
  std::string code_path;  // which of its code paths the implementation ran ("" when it has one)
};

// The measured matmul ceiling per dtype name, for ceiling_share (GFLOP/s).
struct attention_ceiling {
  std::string dtype;
  double gflops = 0;
  std::string shape;            // the product shape that reached it (runner/matmul_ceiling.hpp)
  double spread = std::numeric_limits<double>::quiet_NaN();  // of that shape's timed calls: a share beyond 1 + spread is a bug
};

// The ceilings, when given, are stated under the table with how they were measured.
std::string attention_markdown(const std::vector<attention_row>& rows,
                               const std::vector<attention_ceiling>& ceilings = {});
std::string attention_csv(const std::vector<attention_row>& rows);

}  // namespace attnbench
