#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

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

TEST_CASE("summarize: the geometric mean and its t interval on the logs", "[stats]") {
  const summary s = summarize({16, 1, 4, 2, 8});
  CHECK(s.n == 5);
  CHECK(s.samples == std::vector<double>{16, 1, 4, 2, 8});  // measured order kept
  // logs are ln2 · {4, 0, 2, 1, 3}: mean 2·ln2, sample sd ln2·√2.5
  CHECK(s.geomean == Approx(4.0));
  const double half = 2.776445105 * std::log(2.0) * std::sqrt(2.5) / std::sqrt(5.0);
  CHECK(s.geomean_ci_low == Approx(4.0 * std::exp(-half)));
  CHECK(s.geomean_ci_high == Approx(4.0 * std::exp(half)));
  // The centre is the interval's own: exactly its midpoint on the log scale.
  CHECK(std::log(s.geomean_ci_high / s.geomean) == Approx(std::log(s.geomean / s.geomean_ci_low)));
  // Descriptive values stay available.
  CHECK(s.median == 4.0);
  CHECK(s.mean == 6.2);
  CHECK(s.min == 1.0);
  CHECK(s.max == 16.0);
  CHECK(s.stddev == Approx(std::sqrt(37.2)));
  CHECK(s.relative_half_width() == Approx((s.geomean_ci_high - s.geomean_ci_low) / 8.0));
}

TEST_CASE("summarize: n = 0, 1, 2 and values with no logarithm", "[stats]") {
  const summary empty = summarize({});
  CHECK(empty.n == 0);
  CHECK(empty.samples.empty());
  for (double v : {empty.geomean, empty.geomean_ci_low, empty.geomean_ci_high, empty.median, empty.mean,
                   empty.min, empty.max, empty.stddev})
    CHECK(std::isnan(v));

  const summary one = summarize({7.5});
  CHECK(one.n == 1);
  CHECK(one.geomean == Approx(7.5));
  CHECK(one.median == 7.5);
  CHECK(one.stddev == 0.0);
  CHECK(std::isnan(one.geomean_ci_low));  // one repetition gives no interval
  CHECK(std::isnan(one.geomean_ci_high));
  CHECK(std::isnan(one.relative_half_width()));

  const summary two = summarize({1, 4});
  CHECK(two.geomean == Approx(2.0));
  const double half = 12.706204736 * std::log(4.0) / std::sqrt(2.0) / std::sqrt(2.0);
  CHECK(two.geomean_ci_low == Approx(2.0 * std::exp(-half)));
  CHECK(two.geomean_ci_high == Approx(2.0 * std::exp(half)));

  // A rate of 0 (or below) has no logarithm: no geometric mean, but the descriptive values remain.
  const summary zero = summarize({0, 2, 3});
  CHECK(std::isnan(zero.geomean));
  CHECK(std::isnan(zero.geomean_ci_low));
  CHECK(zero.median == 2.0);
}

TEST_CASE("relative_half_width", "[stats]") {
  CHECK(relative_half_width(90, 110, 100) == Approx(0.1));
  CHECK(relative_half_width(1.0 / 1.1, 1.1, 1.0) == Approx((1.1 - 1 / 1.1) / 2));
  CHECK(std::isnan(relative_half_width(not_a_number, 2, 1)));
  CHECK(std::isnan(relative_half_width(1, 2, 0)));
  CHECK(std::isnan(relative_half_width(1, 2, -1)));
}

TEST_CASE("speedup_of pairs rounds: the geometric mean of the per-round ratios", "[stats]") {
  // Both drift together by round; the per-round ratio is steady at about 2.
  const std::vector<double> baseline = {100, 110, 90, 105};
  const std::vector<double> variant = {200, 221, 179, 210};
  const speedup_summary s = speedup_of(variant, baseline);
  CHECK(s.method == speedup_method::paired);
  const double ratios[] = {2.0, 221.0 / 110, 179.0 / 90, 2.0};
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  CHECK(s.geomean == Approx(std::exp(log_sum / 4)));
  // The speedup is the ratio of the two throughput centres, exactly as printed.
  CHECK(s.geomean == Approx(summarize(variant).geomean / summarize(baseline).geomean).epsilon(1e-12));
  // Pairing cancels the drift: every round's ratio is within 1% of 2, and so is the interval,
  // far narrower than the ±10% spread of either side.
  CHECK(s.geomean_ci_low < s.geomean);
  CHECK(s.geomean_ci_high > s.geomean);
  CHECK(s.geomean_ci_low > 1.97);
  CHECK(s.geomean_ci_high < 2.03);
  const speedup_summary same = speedup_of(baseline, baseline);
  CHECK(same.geomean == 1.0);
  CHECK(same.geomean_ci_low == 1.0);
  CHECK(same.geomean_ci_high == 1.0);
  CHECK(same.relative_half_width() == 0.0);

  const speedup_summary single = speedup_of({3}, {1});
  CHECK(single.geomean == Approx(3.0));
  CHECK(std::isnan(single.geomean_ci_low));
  CHECK(single.method == speedup_method::none);

  CHECK(std::isnan(speedup_of({}, {}).geomean));
  CHECK(std::isnan(speedup_of({1, 2}, {}).geomean));
  CHECK(std::isnan(speedup_of({1, -2}, {1, 2}).geomean));
}

TEST_CASE("speedup_of: unequal lengths take Welch's interval on the logs", "[stats]") {
  // A variant that stopped after 3 rounds against a baseline of 2: not pairable.
  const speedup_summary s = speedup_of({2, 4, 8}, {1, 2});
  CHECK(s.method == speedup_method::welch);
  // logs / ln2: {1, 2, 3} (mean 2, var 1) and {0, 1} (mean 0.5, var 0.5); difference 1.5.
  CHECK(s.geomean == Approx(std::pow(2.0, 1.5)));
  // se = ln2·√(1/3 + 1/4); Welch–Satterthwaite dof (7/12)² / ((1/3)²/2 + (1/4)²/1) = 2.88 → 2
  const double half = 4.302652730 * std::log(2.0) * std::sqrt(7.0 / 12);
  CHECK(s.geomean_ci_low == Approx(std::pow(2.0, 1.5) * std::exp(-half)));
  CHECK(s.geomean_ci_high == Approx(std::pow(2.0, 1.5) * std::exp(half)));
  CHECK(s.geomean == Approx(summarize({2, 4, 8}).geomean / summarize({1, 2}).geomean));
  // A side with one value: the centre, no interval.
  const speedup_summary short_side = speedup_of({2, 4, 8}, {2});
  CHECK(short_side.geomean == Approx(2.0));
  CHECK(short_side.method == speedup_method::none);
  CHECK(std::isnan(short_side.geomean_ci_low));
  // geomean_ratio_unpaired never pairs, even at equal lengths.
  const speedup_summary unpaired = geomean_ratio_unpaired({200, 221, 179, 210}, {100, 110, 90, 105});
  CHECK(unpaired.method == speedup_method::welch);
  CHECK(unpaired.geomean == Approx(speedup_of({200, 221, 179, 210}, {100, 110, 90, 105}).geomean));
  CHECK(unpaired.geomean_ci_high - unpaired.geomean_ci_low > 0.2);  // the drift stays in
  CHECK(to_string(speedup_method::welch) == std::string("welch"));
}

namespace {

// Coverage of the 95% intervals, measured: rounds drawn from known distributions, the share of
// 1,000 trials whose interval holds the true value. A pass's time is a draw scaled by the
// variant's true speed; throughput is 1 / time.
constexpr int coverage_trials = 1000;
constexpr double true_speedup = 1.7;  // variant time = a baseline-distribution draw / 1.7
constexpr double required_coverage = 0.93;

// One distribution of pass times, and the true geometric mean of 1 / time where it has one.
struct time_model {
  const char* name;
  // time of pass `pass` (0-based, 2 per round: baseline then variant) given a per-round shared
  // factor; unscaled (true speed 1)
  std::function<double(std::mt19937_64&, int64_t pass, int64_t passes)> draw;
  // shared by round `round`'s two passes
  std::function<double(std::mt19937_64&, int64_t round, int64_t rounds)> round_factor;
  double true_log_throughput;  // E[log(1 / time)]; NaN where there is no single true value
  double throughput_floor;     // the least coverage the throughput interval is held to
  double speedup_floor = required_coverage;
};

// E[log f(Z)], Z standard normal, by the trapezoid rule over ±10 standard deviations.
double expected_log(const std::function<double(double)>& f) {
  constexpr int steps = 20000;
  constexpr double lo = -10, hi = 10, h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    const double z = lo + h * i;
    const double w = (i == 0 || i == steps) ? 0.5 : 1.0;
    sum += w * std::log(f(z)) * std::exp(-z * z / 2);
  }
  return sum * h / std::sqrt(2 * M_PI);
}

struct coverage {
  double speedup = 0;
  double throughput = not_a_number;
};

coverage measure(const time_model& m, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int speedup_hits = 0, throughput_hits = 0;
  for (int trial = 0; trial < coverage_trials; ++trial) {
    std::vector<double> base(static_cast<size_t>(n)), variant(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const double shared = m.round_factor(rng, i, n);
      base[static_cast<size_t>(i)] = 1.0 / (shared * m.draw(rng, 2 * i, 2 * n));
      variant[static_cast<size_t>(i)] = true_speedup / (shared * m.draw(rng, 2 * i + 1, 2 * n));
    }
    const speedup_summary s = speedup_of(variant, base);
    speedup_hits += s.geomean_ci_low <= true_speedup && true_speedup <= s.geomean_ci_high;
    const summary t = summarize(base);
    const double truth = std::exp(m.true_log_throughput);
    throughput_hits += t.geomean_ci_low <= truth && truth <= t.geomean_ci_high;
  }
  coverage c;
  c.speedup = static_cast<double>(speedup_hits) / coverage_trials;
  if (std::isfinite(m.true_log_throughput))
    c.throughput = static_cast<double>(throughput_hits) / coverage_trials;
  return c;
}

}  // namespace

TEST_CASE("speedup and throughput intervals cover the truth at 5 to 30 rounds", "[stats]") {
  using rng_t = std::mt19937_64;
  const auto no_drift = [](rng_t&, int64_t, int64_t) { return 1.0; };
  const auto normal = [](double mean, double sd) {
    return [=](rng_t& g, int64_t, int64_t) { return std::normal_distribution<double>(mean, sd)(g); };
  };
  // Classical Pareto outliers (x_m = 1, alpha 1.5: infinite variance) on 10% of passes; the log of
  // such a factor is exponential with mean 1 / alpha.
  constexpr double outlier_share = 0.1, pareto_alpha = 1.5;
  constexpr double trend = 0.1;  // the machine slows by 10% over the run
  const double log_normal_5 = expected_log([](double z) { return 1 + 0.05 * z; });
  const double log_normal_3 = expected_log([](double z) { return 1 + 0.03 * z; });
  const double log_skewed = expected_log([](double z) { return 1 + 0.3 * std::exp(z); });
  const std::vector<time_model> models = {
      {"normal, CV 5%", normal(1, 0.05), no_drift, -log_normal_5, required_coverage},
      {"lognormal, sigma 0.3",
       [](rng_t& g, int64_t, int64_t) { return std::lognormal_distribution<double>(0, 0.3)(g); }, no_drift,
       0.0, required_coverage},
      // A floor plus a long right tail: skewed even on the log scale. The mean of 5 logs is
      // skewed too, which a t interval does not know: held to 85%.
      {"skewed, 1 + 0.3 lognormal(0, 1)",
       [](rng_t& g, int64_t, int64_t) { return 1 + 0.3 * std::lognormal_distribution<double>(0, 1)(g); },
       no_drift, -log_skewed, 0.85},
      {"heavy tail, log time 0.05 t(2 dof)",
       [](rng_t& g, int64_t, int64_t) { return std::exp(0.05 * std::student_t_distribution<double>(2)(g)); },
       no_drift, 0.0, required_coverage},
      // Rare huge outliers: most 5-round samples hold none, and a sample that saw none cannot
      // place the geometric mean they shift. No throughput floor (README "How it measures"); the
      // speedup is unaffected, as outliers on either side keep the log ratios symmetric.
      {"Pareto outliers, 10%, alpha 1.5",
       [=](rng_t& g, int64_t, int64_t) {
         const double t = std::normal_distribution<double>(1, 0.03)(g);
         if (std::uniform_real_distribution<double>(0, 1)(g) >= outlier_share) return t;
         return t * std::pow(1 - std::uniform_real_distribution<double>(0, 1)(g), -1 / pareto_alpha);
       },
       no_drift, -(log_normal_3 + outlier_share / pareto_alpha), 0},
      // The machine's speed changes from round to round (sd 20%), hitting both passes of a round.
      {"per-round drift, log sd 0.2", normal(1, 0.05),
       [](rng_t& g, int64_t, int64_t) { return std::lognormal_distribution<double>(0, 0.2)(g); },
       -log_normal_5, required_coverage},
      // Slowing over the run, both passes of a round alike. No single true throughput.
      {"slow trend, +10%, per round", normal(1, 0.05),
       [=](rng_t&, int64_t round, int64_t rounds) {
         return std::exp(trend * static_cast<double>(round) / static_cast<double>(rounds));
       },
       not_a_number, 0},
      // The same trend by pass: the variant always runs one pass after its baseline, so it sees
      // 1 / (2n) of the trend more, a bias the interval cannot know: held to 90%.
      {"slow trend, +10%, per pass",
       [=](rng_t& g, int64_t pass, int64_t passes) {
         return std::exp(trend * static_cast<double>(pass) / static_cast<double>(passes)) *
                std::normal_distribution<double>(1, 0.05)(g);
       },
       no_drift, not_a_number, 0, 0.90},
  };
  std::string table = "coverage of nominal 95% intervals, 1000 trials:\n";
  uint64_t seed = 20250601;
  for (const auto& m : models) {
    for (int64_t n : {5, 10, 30}) {
      const coverage c = measure(m, n, seed++);
      table += fmt::format("{:<34} n={:<2} speedup {:.3f} thrpt {}\n", m.name, n, c.speedup,
                           std::isfinite(c.throughput) ? fmt::format("{:.3f}", c.throughput) : "n/a");
      INFO(m.name << ", n = " << n);
      CHECK(c.speedup >= m.speedup_floor);
      if (std::isfinite(c.throughput)) CHECK(c.throughput >= m.throughput_floor);
    }
  }
  WARN(table);
}
