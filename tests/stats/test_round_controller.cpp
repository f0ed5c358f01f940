// The stopping rule of adaptive repetitions, on a fake clock and synthetic timings: rounds stop
// when every interval meets the target, at max_repetitions, or before the time budget runs out;
// fixed mode runs exactly its rounds.
#include "stats/round_controller.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace attnbench;

namespace {

// A run of interleaved rounds: each round appends every active variant's next pass time and
// advances the fake clock by their sum.
struct fake_run {
  std::vector<std::vector<double>> pass_s;
  std::vector<bool> active;
  double clock = 0;
  int64_t rounds = 0;

  explicit fake_run(size_t variants) : pass_s(variants), active(variants, true) {}
  std::vector<round_series> series() const {
    std::vector<round_series> s;
    for (size_t i = 0; i < pass_s.size(); ++i) s.push_back({&pass_s[i], active[i], i == 0});
    return s;
  }
  // Runs until the controller stops; `next(variant, round)` gives a pass's seconds.
  template <class Next>
  void run(round_controller& c, Next next) {
    c.start();
    while (c.another_round(rounds, series())) {
      for (size_t i = 0; i < pass_s.size(); ++i) {
        if (!active[i]) continue;
        const double s = next(i, rounds);
        pass_s[i].push_back(s);
        clock += s;
      }
      ++rounds;
      REQUIRE(rounds < 10000);
    }
  }
};

// Widths as the reports compute them would couple this test to stats/summary; the rule is tested
// on a simple stand-in: the spread (max − min) / 2 / mean of the last passes.
double spread(const std::vector<double>& v) {
  if (v.size() < 2) return std::nan("");
  double lo = v[0], hi = v[0], sum = 0;
  for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
  return (hi - lo) / 2 / (sum / static_cast<double>(v.size()));
}

interval_widths spread_widths() {
  return {[](const std::vector<double>& v) { return spread(v); },
          [](const std::vector<double>& v, const std::vector<double>& b) {
            std::vector<double> ratio;
            for (size_t i = 0; i < std::min(v.size(), b.size()); ++i) ratio.push_back(b[i] / v[i]);
            return spread(ratio);
          }};
}

repetition_policy adaptive(int64_t min_rounds, int64_t max_rounds, double budget_s, double target) {
  repetition_policy p;
  p.adaptive = true;
  p.min_repetitions = min_rounds;
  p.max_repetitions = max_rounds;
  p.max_time_s = budget_s;
  p.target = target;
  return p;
}

}  // namespace

TEST_CASE("fixed repetitions run exactly their rounds", "[stats][repetitions]") {
  repetition_policy p;
  p.adaptive = false;
  p.repetitions = 7;
  p.max_repetitions = 100;
  fake_run r(2);
  round_controller c(p, spread_widths(), [&] { return r.clock; });
  r.run(c, [](size_t, int64_t k) { return k % 2 ? 1.0 : 3.0; });  // noisy: no matter
  CHECK(r.rounds == 7);
  CHECK(c.reason() == stop_reason::fixed);
}

TEST_CASE("fixed repetitions go on while min_time_s asks, up to max_repetitions", "[stats][repetitions]") {
  repetition_policy p;
  p.adaptive = false;
  p.repetitions = 2;
  p.min_time_s = 5;
  p.max_repetitions = 100;
  fake_run r(2);
  round_controller c(p, spread_widths(), [&] { return r.clock; });
  r.run(c, [](size_t, int64_t) { return 1.0; });
  CHECK(r.rounds == 5);
  p.max_repetitions = 3;
  fake_run bounded(2);
  round_controller c2(p, spread_widths(), [&] { return bounded.clock; });
  bounded.run(c2, [](size_t, int64_t) { return 1.0; });
  CHECK(bounded.rounds == 3);
}

TEST_CASE("adaptive: quiet timings stop at the minimum with the target met", "[stats][repetitions]") {
  fake_run r(3);
  round_controller c(adaptive(5, 100, 0, 0.02), spread_widths(), [&] { return r.clock; });
  r.run(c, [](size_t v, int64_t) { return 1.0 + 0.5 * static_cast<double>(v); });
  CHECK(r.rounds == 5);
  CHECK(c.reason() == stop_reason::target_met);
  const auto s = r.series();
  for (const auto& x : s) CHECK(c.meets_target(x, &s[0]));
}

TEST_CASE("adaptive: rounds go on until the noise settles", "[stats][repetitions]") {
  // ±10% noise for the first 12 rounds, then constant: the spread of a window never narrows, so
  // test a width over the last 5 passes only.
  interval_widths recent = {[](const std::vector<double>& v) {
                              return v.size() < 5 ? std::nan("") : spread({v.end() - 5, v.end()});
                            },
                            [](const std::vector<double>&, const std::vector<double>&) { return 0.0; }};
  fake_run r(2);
  round_controller c(adaptive(5, 100, 0, 0.02), recent, [&] { return r.clock; });
  r.run(c, [](size_t, int64_t k) { return k < 12 ? (k % 2 ? 0.9 : 1.1) : 1.0; });
  CHECK(r.rounds == 17);  // rounds 12..16 are the first five quiet ones
  CHECK(c.reason() == stop_reason::target_met);
}

TEST_CASE("adaptive: the speedup interval must meet the target too", "[stats][repetitions]") {
  interval_widths w = {[](const std::vector<double>&) { return 0.01; },
                       [](const std::vector<double>&, const std::vector<double>&) { return 0.05; }};
  fake_run r(2);
  round_controller c(adaptive(3, 20, 0, 0.02), w, [&] { return r.clock; });
  r.run(c, [](size_t, int64_t) { return 1.0; });
  CHECK(r.rounds == 20);
  CHECK(c.reason() == stop_reason::max_repetitions);
  const auto s = r.series();
  CHECK(c.meets_target(s[0], &s[0]));   // the baseline has no speedup to test
  CHECK(!c.meets_target(s[1], &s[0]));  // the variant's speedup is too wide
}

TEST_CASE("adaptive: never starts a round the time budget cannot finish", "[stats][repetitions]") {
  fake_run r(2);
  round_controller c(adaptive(3, 1000, 10.5, 0.02), spread_widths(), [&] { return r.clock; });
  r.run(c, [](size_t, int64_t k) { return k % 2 ? 0.4 : 0.6; });  // 1 s rounds, ±20%: never meets 2%
  CHECK(c.reason() == stop_reason::time_budget);
  CHECK(r.clock <= 10.5);
  CHECK(r.rounds == 10);
}

TEST_CASE("adaptive: the minimum rounds run even past the budget, inactive variants are not waited for",
          "[stats][repetitions]") {
  fake_run r(3);
  r.active[2] = false;  // failed in its check pass
  round_controller c(adaptive(4, 1000, 1.0, 0.02), spread_widths(), [&] { return r.clock; });
  r.run(c, [](size_t, int64_t k) { return k % 2 ? 0.9 : 1.1; });
  CHECK(r.rounds == 4);
  CHECK(c.reason() == stop_reason::time_budget);
  CHECK(r.pass_s[2].empty());
}

TEST_CASE("no active variant: nothing runs", "[stats][repetitions]") {
  fake_run r(1);
  r.active[0] = false;
  round_controller c(adaptive(4, 10, 0, 0.02), spread_widths(), [&] { return r.clock; });
  r.run(c, [](size_t, int64_t) { return 1.0; });
  CHECK(r.rounds == 0);
  CHECK(c.reason() == stop_reason::nothing_to_run);
  CHECK(to_string(stop_reason::target_met) == "target met");
}
