// Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of two independent samples: do repetitions
// of one build tend to be larger than repetitions of the other? It assumes nothing about the
// shape of the distributions, which suits timings (skewed, with outliers from the machine).
//
// The p-value is the one scipy.stats.mannwhitneyu(x, y, alternative="two-sided") gives with its
// defaults (method="auto", use_continuity=True), which google/benchmark's compare.py reports:
//   - exact, from the null distribution of U, when there are no ties and at least one sample
//     has 8 values or fewer;
//   - otherwise the normal approximation with the tie correction of the variance and a
//     continuity correction of 0.5.
#pragma once

#include <cstdint>
#include <vector>

namespace attnbench {

enum class mann_whitney_method { exact, asymptotic };
const char* to_string(mann_whitney_method m);  // "exact", "asymptotic"

struct mann_whitney_result {
  double u = 0;        // U of the first sample: pairs (x_i, y_j) with x_i > y_j, ties counting ½
  double p_value = 1;  // two-sided, in [0, 1]
  mann_whitney_method method = mann_whitney_method::exact;
  bool ties = false;  // some value occurs more than once across both samples
};

// Either sample empty → p_value NaN (nothing to test). Every value identical → p_value 1.
// Inputs are expected to be finite.
mann_whitney_result mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// The smallest two-sided p-value any data can give with sample sizes n1 and n2 (no ties, every
// x above every y): 2 / C(n1 + n2, n1), at most 1. When it is not below alpha, no outcome can
// be significant: n1 = n2 = 2 gives 1/3, n1 = n2 = 3 gives 0.1, n1 = n2 = 4 gives 0.029.
// n1 or n2 < 1 → 1.
double min_two_sided_p(int64_t n1, int64_t n2);

}  // namespace attnbench
