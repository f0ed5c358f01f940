#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "stats/mann_whitney.hpp"

using namespace attnbench;

// Reference values: scipy.stats.mannwhitneyu(x, y, alternative="two-sided") of scipy 1.17.1
// (method="auto", use_continuity=True), the call google/benchmark's compare.py makes.

TEST_CASE("Mann-Whitney U: exact p-values without ties", "[stats]") {
  struct known {
    std::vector<double> x, y;
    double u, p;
  };
  const std::vector<known> cases = {
      {{1, 2}, {3, 4}, 0, 1.0 / 3},
      {{1, 2, 3}, {4, 5, 6}, 0, 0.1},
      {{1, 2, 3, 4}, {5, 6, 7, 8}, 0, 0.02857142857142857},
      {{19.1, 20.3, 18.7, 21.0, 20.1}, {17.2, 16.9, 18.0, 17.5, 16.4}, 25, 0.007936507936507936},
      {{1.1, 2.2, 3.3, 4.4, 5.5, 6.6}, {2.5, 3.5, 4.5, 5.2, 6.1}, 12, 0.6623376623376623},
  };
  for (const auto& c : cases) {
    const mann_whitney_result r = mann_whitney_u(c.x, c.y);
    INFO("n1=" << c.x.size() << " n2=" << c.y.size());
    CHECK(r.method == mann_whitney_method::exact);
    CHECK_FALSE(r.ties);
    CHECK(r.u == c.u);
    CHECK(r.p_value == Approx(c.p).epsilon(1e-12));
  }
  // Swapping the samples keeps the two-sided p and mirrors U.
  const mann_whitney_result swapped =
      mann_whitney_u({17.2, 16.9, 18.0, 17.5, 16.4}, {19.1, 20.3, 18.7, 21.0, 20.1});
  CHECK(swapped.u == 0);
  CHECK(swapped.p_value == Approx(0.007936507936507936).epsilon(1e-12));
}

TEST_CASE("Mann-Whitney U: normal approximation with ties or two large samples", "[stats]") {
  SECTION("ties: tie-corrected variance, continuity correction") {
    const mann_whitney_result r = mann_whitney_u({1, 2, 2, 3, 4}, {2, 3, 3, 5, 6});
    CHECK(r.method == mann_whitney_method::asymptotic);
    CHECK(r.ties);
    CHECK(r.u == 6.0);
    CHECK(r.p_value == Approx(0.19882894401644247).epsilon(1e-12));
  }
  SECTION("both samples longer than 8") {
    const mann_whitney_result r = mann_whitney_u({1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
                                                 {3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5});
    CHECK(r.method == mann_whitney_method::asymptotic);
    CHECK(r.u == 28.0);
    CHECK(r.p_value == Approx(0.10410988966022681).epsilon(1e-12));
    const mann_whitney_result nine_ten =
        mann_whitney_u({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5});
    CHECK(nine_ten.u == 36.0);
    CHECK(nine_ten.p_value == Approx(0.48766835345893045).epsilon(1e-12));
  }
  SECTION("well separated, 12 each") {
    std::vector<double> fast, slow;
    for (int i = 0; i < 12; ++i) {
      fast.push_back(100 + std::fmod(i * 0.37, 3.0));
      slow.push_back(80 + std::fmod(i * 0.41, 3.0));
    }
    const mann_whitney_result r = mann_whitney_u(fast, slow);
    CHECK(r.u == 144.0);
    CHECK(r.p_value == Approx(3.6584553538971e-05).epsilon(1e-9));
  }
}

TEST_CASE("Mann-Whitney U: edge cases", "[stats]") {
  const mann_whitney_result all_tied = mann_whitney_u({5, 5, 5}, {5, 5, 5});
  CHECK(all_tied.u == 4.5);
  CHECK(all_tied.p_value == 1.0);
  CHECK(std::isnan(mann_whitney_u({}, {1, 2}).p_value));
  CHECK(std::isnan(mann_whitney_u({1}, {}).p_value));
  const mann_whitney_result one_each = mann_whitney_u({2}, {1});
  CHECK(one_each.u == 1.0);
  CHECK(one_each.p_value == 1.0);
}

TEST_CASE("smallest attainable two-sided p-value", "[stats]") {
  CHECK(min_two_sided_p(2, 2) == Approx(1.0 / 3));
  CHECK(min_two_sided_p(3, 3) == Approx(0.1));
  CHECK(min_two_sided_p(4, 4) == Approx(2.0 / 70));
  CHECK(min_two_sided_p(5, 5) == Approx(2.0 / 252));
  CHECK(min_two_sided_p(3, 4) == Approx(2.0 / 35));
  CHECK(min_two_sided_p(1, 1) == 1.0);
  CHECK(min_two_sided_p(1, 30) == Approx(2.0 / 31));
  CHECK(min_two_sided_p(0, 5) == 1.0);
  // It is the p-value of complete separation.
  CHECK(mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8}).p_value == Approx(min_two_sided_p(4, 4)));
}
