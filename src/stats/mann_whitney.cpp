#include "stats/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "stats/summary_types.hpp"

namespace attnbench {
namespace {

// scipy's method="auto" uses the exact distribution when either sample is at most this long
// (and nothing is tied); beyond it the normal approximation is accurate to about 1e-3.
constexpr size_t exact_max_size = 8;
constexpr double continuity_correction = 0.5;

// Frequencies of U = 0 … n1·n2 under the null hypothesis, as probabilities. The count of
// arrangements with U = k is the coefficient of q^k in the Gaussian binomial coefficient
// [n1 + n2 choose n1]_q = ∏_{i=1..n1} (1 − q^{n2+i}) / (1 − q^i); each factor is one multiply
// and one running-sum divide, O(n1 · n1·n2) in all.
std::vector<double> u_distribution(size_t n1, size_t n2) {
  const size_t max_u = n1 * n2;
  std::vector<double> poly(max_u + 1, 0.0);
  poly[0] = 1.0;
  for (size_t i = 1; i <= n1; ++i) {
    const size_t up = n2 + i;
    for (size_t k = max_u; k >= up; --k) poly[k] -= poly[k - up];  // × (1 − q^up)
    for (size_t k = i; k <= max_u; ++k) poly[k] += poly[k - i];    // ÷ (1 − q^i)
  }
  const double total = std::accumulate(poly.begin(), poly.end(), 0.0);  // C(n1 + n2, n1)
  for (double& p : poly) p /= total;
  return poly;
}

// Upper tail of the standard normal, P(Z ≥ z).
double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

const char* to_string(mann_whitney_method m) {
  return m == mann_whitney_method::exact ? "exact" : "asymptotic";
}

mann_whitney_result mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  mann_whitney_result r;
  const size_t n1 = x.size(), n2 = y.size();
  if (n1 == 0 || n2 == 0) {
    r.p_value = not_a_number;
    return r;
  }
  // Midranks of the pooled sample (1-based), and Σ(t³ − t) over groups of t tied values.
  struct item {
    double value;
    bool first;
  };
  std::vector<item> pooled;
  pooled.reserve(n1 + n2);
  for (double v : x) pooled.push_back({v, true});
  for (double v : y) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(), [](const item& a, const item& b) { return a.value < b.value; });
  double rank_sum_x = 0.0, tie_term = 0.0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].value == pooled[i].value) ++j;
    const double t = static_cast<double>(j - i);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].first) rank_sum_x += midrank;
    tie_term += t * t * t - t;
    i = j;
  }
  r.ties = tie_term > 0;
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  r.u = rank_sum_x - d1 * (d1 + 1) / 2;
  // Two-sided: twice the upper tail at the larger of U1 and U2 = n1·n2 − U1 (the distribution
  // is symmetric), the tail including the mass at that value, as scipy does.
  const double u_max = std::max(r.u, d1 * d2 - r.u);

  if (!r.ties && std::min(n1, n2) <= exact_max_size) {
    r.method = mann_whitney_method::exact;
    const std::vector<double> pmf = u_distribution(std::min(n1, n2), std::max(n1, n2));
    const auto k = static_cast<size_t>(std::llround(u_max));  // an integer without ties
    // Sum the smaller side for accuracy: P(U ≥ k) = P(U ≤ n1·n2 − k) by symmetry.
    const size_t kc = n1 * n2 - k;
    const double tail = std::accumulate(pmf.begin(), pmf.begin() + static_cast<std::ptrdiff_t>(kc) + 1, 0.0);
    r.p_value = std::min(1.0, 2 * tail);
    return r;
  }

  r.method = mann_whitney_method::asymptotic;
  const double n = d1 + d2;
  const double variance = d1 * d2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) {
    r.p_value = 1.0;  // every value tied: no evidence of a difference
    return r;
  }
  const double z = (u_max - d1 * d2 / 2 - continuity_correction) / std::sqrt(variance);
  r.p_value = std::clamp(2 * normal_sf(z), 0.0, 1.0);
  return r;
}

double min_two_sided_p(int64_t n1, int64_t n2) {
  if (n1 < 1 || n2 < 1) return 1.0;
  // 2 / C(n1 + n2, n1), with the binomial coefficient built as a running product of ratios.
  const int64_t k = std::min(n1, n2);
  double combinations = 1.0;
  for (int64_t i = 1; i <= k; ++i)
    combinations = combinations * static_cast<double>(n1 + n2 - k + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / combinations);
}

}  // namespace attnbench
