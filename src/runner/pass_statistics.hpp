// The throughput statistics of a variant's timed passes, shared by every scenario that times
// whole passes (offline inference, training): rates per pass, their summaries, and the speedup
// against the baseline's passes of the same run.
#pragma once

#include <vector>

#include "report/result.hpp"

namespace attnbench {

// amount / seconds for each pass (e.g. samples per pass → samples/s per pass).
std::vector<double> per_second(const std::vector<double>& pass_s, double amount);

// Fills r.throughput (samples/s), r.tokens_per_s and, when the baseline ran, r.speedup (the
// geometric mean of the per-round ratios with its t interval; stats/summary.hpp) from the pass
// times.
void summarize_passes(variant_result& r, const std::vector<double>& pass_s, double samples, double tokens,
                      const std::vector<double>& base_samples_per_s, bool base_ran);

}  // namespace attnbench
