// Statistics over repeated measurements: small free functions over std::vector<double>, each
// with its edge cases stated. Inputs are expected to be finite unless a function says what it
// does with others; NaN in an output means "undefined" (stats/summary_types.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "stats/summary_types.hpp"

namespace attnbench {

// Middle value, mean of the two middle values for even n. n = 0 → NaN.
double median(std::vector<double> values);

// Arithmetic mean. n = 0 → NaN.
double mean(const std::vector<double>& values);

// Sample standard deviation (divides by n − 1). n = 1 → 0, n = 0 → NaN.
double stddev(const std::vector<double>& values);

// p-th percentile, p in [0, 100], interpolating linearly between the closest ranks
// (numpy.percentile's default "linear" method). n = 0 or p outside [0, 100] → NaN.
double percentile(std::vector<double> values, double p);

// Two-sided 95% critical value of Student's t (its 0.975 quantile) for `dof` degrees of
// freedom: exact to 1e-9 for dof ≤ 30, within 1e-6 above. dof < 1 → NaN.
double t_quantile_975(int64_t dof);

// The 95% interval of a geometric mean: {centre, low, high} = exp(m), exp(m ∓ t(n−1)·s/√n)
// with m and s the mean and sample standard deviation of log(values).
// n = 1: centre set, low = high = NaN. n = 0, or a value ≤ 0 or not finite: all NaN.
struct geomean_interval {
  double centre = not_a_number;
  double low = not_a_number;
  double high = not_a_number;
};
geomean_interval geomean_ci(const std::vector<double>& values);

// n, the geometric mean and its 95% interval (geomean_ci), and the descriptive median, mean,
// min, max and stddev. samples are kept in the order given (the measured order).
// n = 1: stddev 0, interval NaN. n = 0: every statistic NaN.
summary summarize(const std::vector<double>& samples);

// Speedup of `variant` over `baseline`, both rates (higher is faster), one value per round.
// Equal lengths: the rounds are paired (round i ran variant and baseline back to back), and the
// centre and 95% interval are geomean_ci of the per-round ratios variant[i] / baseline[i]:
// drift a round shares cancels in its ratio, and the log ratios are symmetric about log of the
// true ratio whenever the two variants' times differ by a scale, so the t interval holds from 5
// rounds (README "How it measures" has the measured coverage).
// Unequal lengths (a variant that failed part way, so rounds cannot be paired):
// geomean_ratio_unpaired (Welch); the centre is geomean(variant) / geomean(baseline).
// Either way centre == summarize(variant).geomean / summarize(baseline).geomean.
// Fewer than 2 values on a side: centre only, interval NaN, method none. Either side empty or
// holding a value ≤ 0: everything NaN.
speedup_summary speedup_of(const std::vector<double>& variant, const std::vector<double>& baseline);

// geomean(a) / geomean(b) with Welch's t interval of mean(log a) − mean(log b), for two
// independent samples (two runs, or rounds that cannot be paired); Welch–Satterthwaite degrees
// of freedom rounded down (conservative). Method welch; fewer than 2 values on a side: centre
// only, method none. Either side empty or holding a value ≤ 0 or not finite: everything NaN.
speedup_summary geomean_ratio_unpaired(const std::vector<double>& a, const std::vector<double>& b);

// (high − low) / (2 · centre): the half-width of an interval relative to its centre, the
// "± x%" a stopping rule compares with its target noise. For a geomean interval
// [c/f, c·f] it is (f − 1/f)/2, within 1% of log f while f < 1.2. NaN when any input is not
// finite or centre ≤ 0.
double relative_half_width(double low, double high, double centre);

}  // namespace attnbench
