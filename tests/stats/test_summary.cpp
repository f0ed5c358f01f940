#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "stats/summary.hpp"

using namespace attnbench;

TEST_CASE("median, mean and stddev of known data", "[stats]") {
  const std::vector<double> v = {3, 1, 5, 2, 4};
  CHECK(median(v) == 3.0);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(mean(v) == 3.0);
  CHECK(stddev(v) == Approx(std::sqrt(2.5)));
  CHECK(stddev({7.0}) == 0.0);
  CHECK(std::isnan(median({})));
  CHECK(std::isnan(mean({})));
  CHECK(std::isnan(stddev({})));
}

TEST_CASE("percentile interpolates like numpy's default", "[stats]") {
  // numpy.percentile([1, 2, 3, 4, 10], p): rank = p/100 * (n - 1) between sorted values.
  const std::vector<double> v = {10, 1, 4, 2, 3};
  CHECK(percentile(v, 0) == 1.0);
  CHECK(percentile(v, 100) == 10.0);
  CHECK(percentile(v, 50) == 3.0);
  CHECK(percentile(v, 90) == Approx(7.6));   // rank 3.6: 4 + 0.6 * (10 - 4)
  CHECK(percentile(v, 99) == Approx(9.76));  // rank 3.96
  CHECK(percentile(v, 25) == 2.0);           // rank 1 exactly
  CHECK(percentile({1, 2}, 10) == Approx(1.1));
  CHECK(percentile({42}, 99) == 42.0);
  CHECK(std::isnan(percentile({}, 50)));
  CHECK(std::isnan(percentile(v, -1)));
  CHECK(std::isnan(percentile(v, 101)));
}

TEST_CASE("t quantiles: table and approximation", "[stats]") {
  CHECK(t_quantile_975(1) == Approx(12.706205).margin(1e-6));
  CHECK(t_quantile_975(4) == Approx(2.776445).margin(1e-6));
  CHECK(t_quantile_975(10) == Approx(2.228139).margin(1e-6));
  CHECK(t_quantile_975(30) == Approx(2.042272).margin(1e-6));
  // Beyond the table: values from the regularized incomplete beta function.
  CHECK(t_quantile_975(31) == Approx(2.039513).margin(1e-5));
  CHECK(t_quantile_975(40) == Approx(2.021075).margin(1e-5));
  CHECK(t_quantile_975(60) == Approx(2.000298).margin(1e-5));
  CHECK(t_quantile_975(120) == Approx(1.979930).margin(1e-5));
  CHECK(t_quantile_975(1000) == Approx(1.962339).margin(1e-5));
  CHECK(std::isnan(t_quantile_975(0)));
  CHECK(std::isnan(t_quantile_975(-3)));
}

TEST_CASE("summarize: n = 5 gives a t-based confidence interval", "[stats]") {
  const summary s = summarize({5, 1, 4, 2, 3});
  CHECK(s.n == 5);
  CHECK(s.samples == std::vector<double>{5, 1, 4, 2, 3});  // measured order kept
  CHECK(s.median == 3.0);
  CHECK(s.mean == 3.0);
  CHECK(s.min == 1.0);
  CHECK(s.max == 5.0);
  CHECK(s.stddev == Approx(std::sqrt(2.5)));
  const double half = 2.776445105 * std::sqrt(2.5) / std::sqrt(5.0);
  CHECK(s.ci_low == Approx(3.0 - half));
  CHECK(s.ci_high == Approx(3.0 + half));
}

TEST_CASE("summarize: n = 0, 1, 2", "[stats]") {
  const summary empty = summarize({});
  CHECK(empty.n == 0);
  CHECK(empty.samples.empty());
  for (double v : {empty.median, empty.mean, empty.min, empty.max, empty.stddev, empty.ci_low, empty.ci_high})
    CHECK(std::isnan(v));

  const summary one = summarize({7.5});
  CHECK(one.n == 1);
  CHECK(one.median == 7.5);
  CHECK(one.min == 7.5);
  CHECK(one.max == 7.5);
  CHECK(one.stddev == 0.0);
  CHECK(std::isnan(one.ci_low));
  CHECK(std::isnan(one.ci_high));

  const summary two = summarize({1, 3});
  CHECK(two.median == 2.0);
  CHECK(two.stddev == Approx(std::sqrt(2.0)));
  const double half = 12.706204736 * std::sqrt(2.0) / std::sqrt(2.0);
  CHECK(two.ci_low == Approx(2.0 - half));
  CHECK(two.ci_high == Approx(2.0 + half));
}

TEST_CASE("speedup_of pairs rounds", "[stats]") {
  // Both drift together by round; the per-round ratio is steady at about 2.
  const std::vector<double> baseline = {100, 110, 90, 105};
  const std::vector<double> variant = {200, 221, 179, 210};
  const speedup_summary s = speedup_of(variant, baseline);
  CHECK(s.median == Approx((210.0 + 200.0) / 2 / ((105.0 + 100.0) / 2)));
  // The paired bootstrap interval holds the ratio of medians and stays narrow: every round's
  // ratio is within 1% of 2, whatever the drift.
  CHECK(s.ci_low <= s.median);
  CHECK(s.ci_high >= s.median);
  CHECK(s.ci_low >= 179.0 / 90 - 1e-12);
  CHECK(s.ci_high <= 221.0 / 110 + 1e-12);
  CHECK(s.ci_high - s.ci_low < 0.05);  // far narrower than the unpaired spread (≈ 0.2) would give
  const speedup_summary again = speedup_of(variant, baseline);
  CHECK(again.ci_low == s.ci_low);  // fixed seed: reproducible
  CHECK(again.ci_high == s.ci_high);
  const speedup_summary same = speedup_of(baseline, baseline);
  CHECK(same.median == 1.0);
  CHECK(same.ci_low == 1.0);
  CHECK(same.ci_high == 1.0);

  const speedup_summary unpaired = speedup_of({2, 4, 6}, {1, 2});
  CHECK(unpaired.median == Approx(4.0 / 1.5));
  CHECK(std::isnan(unpaired.ci_low));
  CHECK(std::isnan(unpaired.ci_high));

  const speedup_summary single = speedup_of({3}, {1});
  CHECK(single.median == 3.0);
  CHECK(std::isnan(single.ci_low));

  CHECK(std::isnan(speedup_of({}, {}).median));
}
