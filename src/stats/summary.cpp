#include "stats/summary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>

namespace attnbench {
namespace {

// Resamples of the speedup bootstrap: the 2.5% quantile of 2000 draws moves by well under 1% of
// the interval between seeds.
constexpr size_t bootstrap_resamples = 2000;
constexpr uint64_t bootstrap_seed = 0x5eed;  // any fixed value: reproducible intervals

}  // namespace

namespace {

// 0.975 quantiles of Student's t for dof 1..30 (computed from the regularized incomplete
// beta function to 30 digits, rounded to 9 decimals).
constexpr std::array<double, 30> t975_table = {
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252, 2.306004135,
    2.262157163,  2.228138852, 2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546, 2.119905299,
    2.109815578,  2.100922040, 2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
    2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456};

constexpr double normal_quantile_975 = 1.959963984540054;

// mean ± t(n−1)·s/√n; NaN for n < 2, where the interval is undefined.
std::pair<double, double> mean_ci(const std::vector<double>& values) {
  const auto n = static_cast<int64_t>(values.size());
  if (n < 2) return {not_a_number, not_a_number};
  const double m = mean(values);
  const double half = t_quantile_975(n - 1) * stddev(values) / std::sqrt(static_cast<double>(n));
  return {m - half, m + half};
}

}  // namespace

double median(std::vector<double> values) { return percentile(std::move(values), 50.0); }

double mean(const std::vector<double>& values) {
  if (values.empty()) return not_a_number;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stddev(const std::vector<double>& values) {
  if (values.empty()) return not_a_number;
  if (values.size() == 1) return 0.0;
  const double m = mean(values);
  double squares = 0.0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double percentile(std::vector<double> values, double p) {
  if (values.empty() || !(p >= 0.0 && p <= 100.0)) return not_a_number;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

double t_quantile_975(int64_t dof) {
  if (dof < 1) return not_a_number;
  if (dof <= static_cast<int64_t>(t975_table.size())) return t975_table[static_cast<size_t>(dof - 1)];
  // Cornish-Fisher expansion in powers of 1/dof (Abramowitz & Stegun 26.7.5); for dof > 30
  // its error is below 1e-6.
  const double z = normal_quantile_975, z2 = z * z, nu = static_cast<double>(dof);
  const double g1 = (z2 + 1) * z / 4;
  const double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu;
}

summary summarize(const std::vector<double>& samples) {
  summary s;
  s.n = static_cast<int64_t>(samples.size());
  s.samples = samples;
  if (samples.empty()) return s;
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  s.median = median(samples);
  s.mean = mean(samples);
  s.stddev = stddev(samples);
  std::tie(s.ci_low, s.ci_high) = mean_ci(samples);
  return s;
}

speedup_summary speedup_of(const std::vector<double>& variant, const std::vector<double>& baseline) {
  speedup_summary s;
  s.median = median(variant) / median(baseline);
  const size_t n = variant.size();
  if (n != baseline.size() || n < 2) return s;
  // Paired percentile bootstrap of the ratio of medians: resample whole rounds (keeping each
  // round's variant and baseline together, so shared drift cancels) and take the 2.5% and 97.5%
  // quantiles of the resampled ratios. A fixed seed makes the interval reproducible.
  std::mt19937_64 rng(bootstrap_seed);
  std::vector<double> ratios(bootstrap_resamples);
  std::vector<double> v(n), b(n);
  for (auto& ratio : ratios) {
    for (size_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(rng() % n);  // modulo bias is ~n/2^64: negligible
      v[i] = variant[k];
      b[i] = baseline[k];
    }
    ratio = median(v) / median(b);
  }
  s.ci_low = percentile(ratios, 2.5);
  s.ci_high = percentile(ratios, 97.5);
  return s;
}

}  // namespace attnbench
