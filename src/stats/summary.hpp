// Descriptive statistics over repeated measurements: small free functions over
// std::vector<double>, each with its edge cases stated. Inputs are expected to be finite;
// NaN inputs give unspecified results. NaN in an output means "undefined" (see result.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "report/result.hpp"

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

// n, median, mean, min, max, stddev and the 95% CI of the mean, mean ± t(n−1)·s/√n.
// samples are kept in the order given (the measured order).
// n = 1: stddev 0, ci_low = ci_high = NaN (one repetition gives no interval).
// n = 0: every statistic NaN.
summary summarize(const std::vector<double>& samples);

// Speedup of `variant` over `baseline`, both throughputs (higher is faster), one sample per
// round. median = median(variant) / median(baseline). The 95% CI is a paired percentile
// bootstrap of that same ratio (2000 resamples of whole rounds, fixed seed): pairing cancels
// drift shared by a round, and the interval describes the reported statistic itself.
// Lengths differ (rounds cannot be paired) or fewer than 2 rounds → CI NaN, median still set.
// Either input empty → everything NaN.
speedup_summary speedup_of(const std::vector<double>& variant, const std::vector<double>& baseline);

}  // namespace attnbench
