#include "stats/summary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <utility>

namespace attnbench {
namespace {

// 0.975 quantiles of Student's t for dof 1..30 (computed from the regularized incomplete
// beta function to 30 digits, rounded to 9 decimals).
constexpr std::array<double, 30> t975_table = {
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252, 2.306004135,
    2.262157163,  2.228138852, 2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546, 2.119905299,
    2.109815578,  2.100922040, 2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
    2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456};

constexpr double normal_quantile_975 = 1.959963984540054;

// log of every value; empty when any value is ≤ 0 or not finite (no geometric mean exists).
std::vector<double> logs_of(const std::vector<double>& values) {
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return {};
    logs.push_back(std::log(v));
  }
  return logs;
}

// Mean of logs ± t(n−1)·s/√n, mapped back with exp. An empty input means "no geometric mean".
geomean_interval interval_of_logs(const std::vector<double>& logs) {
  geomean_interval g;
  const auto n = static_cast<int64_t>(logs.size());
  if (n == 0) return g;
  const double m = mean(logs);
  g.centre = std::exp(m);
  if (n < 2) return g;
  const double half = t_quantile_975(n - 1) * stddev(logs) / std::sqrt(static_cast<double>(n));
  g.low = std::exp(m - half);
  g.high = std::exp(m + half);
  return g;
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

geomean_interval geomean_ci(const std::vector<double>& values) { return interval_of_logs(logs_of(values)); }

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
  const geomean_interval g = geomean_ci(samples);
  s.geomean = g.centre;
  s.geomean_ci_low = g.low;
  s.geomean_ci_high = g.high;
  return s;
}

speedup_summary speedup_of(const std::vector<double>& variant, const std::vector<double>& baseline) {
  speedup_summary s;
  const std::vector<double> v = logs_of(variant), b = logs_of(baseline);
  if (v.empty() || b.empty()) return s;
  if (v.size() == b.size()) {
    // Paired rounds: the interval of the mean log ratio. Its centre, mean(v − b), is
    // mean(v) − mean(b): the ratio of the two geometric means.
    std::vector<double> log_ratios(v.size());
    for (size_t i = 0; i < v.size(); ++i) log_ratios[i] = v[i] - b[i];
    const geomean_interval g = interval_of_logs(log_ratios);
    s.geomean = g.centre;
    s.geomean_ci_low = g.low;
    s.geomean_ci_high = g.high;
    if (v.size() >= 2) s.method = speedup_method::paired;
    return s;
  }
  return geomean_ratio_unpaired(variant, baseline);
}

speedup_summary geomean_ratio_unpaired(const std::vector<double>& a, const std::vector<double>& b) {
  speedup_summary s;
  const std::vector<double> la = logs_of(a), lb = logs_of(b);
  if (la.empty() || lb.empty()) return s;
  const double diff = mean(la) - mean(lb);
  s.geomean = std::exp(diff);
  if (la.size() < 2 || lb.size() < 2) return s;
  // se² = s_a²/n_a + s_b²/n_b; Welch–Satterthwaite dof, rounded down.
  const double na = static_cast<double>(la.size()), nb = static_cast<double>(lb.size());
  const double qa = std::pow(stddev(la), 2) / na, qb = std::pow(stddev(lb), 2) / nb;
  const double se = std::sqrt(qa + qb);
  s.method = speedup_method::welch;
  if (se == 0) {  // both sides constant: no spread, the interval is the point
    s.geomean_ci_low = s.geomean_ci_high = s.geomean;
    return s;
  }
  const double dof = (qa + qb) * (qa + qb) / (qa * qa / (na - 1) + qb * qb / (nb - 1));
  const double half = t_quantile_975(std::max<int64_t>(1, static_cast<int64_t>(std::floor(dof)))) * se;
  s.geomean_ci_low = std::exp(diff - half);
  s.geomean_ci_high = std::exp(diff + half);
  return s;
}

double relative_half_width(double low, double high, double centre) {
  if (!std::isfinite(low) || !std::isfinite(high) || !std::isfinite(centre) || !(centre > 0))
    return not_a_number;
  return (high - low) / (2 * centre);
}

double summary::relative_half_width() const {
  return attnbench::relative_half_width(geomean_ci_low, geomean_ci_high, geomean);
}

double speedup_summary::relative_half_width() const {
  return attnbench::relative_half_width(geomean_ci_low, geomean_ci_high, geomean);
}

const char* to_string(speedup_method m) {
  switch (m) {
    case speedup_method::none:
      return "none";
    case speedup_method::paired:
      return "paired";
    case speedup_method::welch:
      return "welch";
  }
  return "unknown";  // unreachable for valid enum values
}

}  // namespace attnbench
