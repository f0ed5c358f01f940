// The records the statistics functions fill (stats/summary.hpp): plain values, no behaviour
// beyond the relative half-width. They live in stats/ so that statistics depend on nothing
// above them; the result record (report/result.hpp) holds them.
//
// NaN means "undefined" (an interval from one repetition, a variant that did not run): JSON
// null, "n/a" in text.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace attnbench {

inline constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

// Repeated measurements of a rate (samples/s, tokens/s), one value per timed round.
//
// The reported centre is the geometric mean, and its interval is the 95% Student-t interval of
// the mean of the logs, mapped back: exp(mean(log x) ± t(0.975, n−1)·sd(log x)/√n). Timings are
// positive, right-skewed and act multiplicatively (a slower machine scales every pass), so they
// are close to normal on the log scale; a ratio of two centres is then a difference of means of
// logs, which is what the speedup interval is built on. README "How it measures" has the
// coverage measured at 5 to 30 rounds.
// n = 1: interval NaN. n = 0, or any sample ≤ 0 or not finite: geomean and interval NaN.
struct summary {
  int64_t n = 0;
  double geomean = not_a_number;         // the centre every report prints
  double geomean_ci_low = not_a_number;  // its 95% interval
  double geomean_ci_high = not_a_number;
  // Descriptive only (spread, outliers): no interval belongs to them.
  double median = not_a_number;
  double mean = not_a_number;
  double min = not_a_number;
  double max = not_a_number;
  double stddev = not_a_number;  // sample standard deviation (n − 1)
  std::vector<double> samples;   // every repetition, in the order measured

  double relative_half_width() const;  // of the geomean's interval; see relative_half_width()
};

// How the speedup interval was built.
enum class speedup_method {
  none,    // no interval: fewer than 2 values on a side (or nothing to compare)
  paired,  // one variant and one baseline value per round: t interval of the per-round log ratios
  welch,   // unequal lengths (a variant that failed part way): Welch t interval of the two logs' means
};
const char* to_string(speedup_method m);  // "none", "paired", "welch"

// Speedup of a variant over the baseline, from samples/s per round.
// geomean = exp(mean(log(v_i / b_i))) for paired rounds, which equals geomean(v) / geomean(b)
// exactly: the speedup is always the ratio of the two throughput centres.
struct speedup_summary {
  double geomean = not_a_number;
  double geomean_ci_low = not_a_number;  // 95%
  double geomean_ci_high = not_a_number;
  speedup_method method = speedup_method::none;

  double relative_half_width() const;
};

struct latency_summary {
  double p50 = not_a_number;  // per-batch wall time, ms, over every timed batch
  double p90 = not_a_number;
  double p99 = not_a_number;
};

}  // namespace attnbench
