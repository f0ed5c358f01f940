#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "report/history_series.hpp"

using namespace attnbench;

namespace {

history_point point(const std::string& cpu, const std::string& variant, const std::string& date, double sps) {
  history_point p;
  p.config_name = "ci";
  p.config_hash = "abc";
  p.cpu_identity = cpu;
  p.device = "cpu";
  p.threads = 1;
  p.variant = variant;
  p.date = date;
  p.git_commit = "c" + date;
  p.status = "PASS";
  p.samples_per_s = sps;
  return p;
}

}  // namespace

TEST_CASE("history band: median of the earlier logs ± max(3 × 1.4826 × MAD, 2%)", "[report]") {
  // Too few earlier points: no band.
  CHECK_FALSE(band_of({100, 101}).defined);
  // log-MAD of {100, 102, 98, 101, 99}: deviations from log 100 ≈ {0, .0198, .0202, .00995, .01005}
  // → MAD ≈ .01005, w = 3 × 1.4826 × .01005 ≈ 0.0447.
  const history_band b = band_of({100, 102, 98, 101, 99});
  REQUIRE(b.defined);
  CHECK(b.centre == Approx(100));
  CHECK(b.half_width == Approx(3 * 1.4826 * std::log(100.0 / 99.0)).epsilon(1e-3));
  CHECK(position_in(b, 97) == band_position::in);
  CHECK(position_in(b, 90) == band_position::below);
  CHECK(position_in(b, 110) == band_position::above);
  // A flat series: the 2% floor, so a 1% wobble is not flagged but a 3% drop is.
  const history_band flat = band_of({100, 100, 100, 100});
  CHECK(flat.half_width == Approx(0.02));
  CHECK(position_in(flat, 99) == band_position::in);
  CHECK(position_in(flat, 97) == band_position::below);
  // Only the last `window` points count: an old slow era is forgotten.
  std::vector<double> old_then_new(10, 50.0);
  for (int i = 0; i < 20; ++i) old_then_new.push_back(100);
  CHECK(band_of(old_then_new).centre == Approx(100));
}

TEST_CASE("history series: a machine change is a new series, never a regression", "[report]") {
  std::vector<history_point> pts;
  for (int d = 1; d <= 5; ++d) pts.push_back(point("Zen 3", "base", "2026-11-0" + std::to_string(d), 100 + d % 2));
  pts.push_back(point("Zen 4", "base", "2026-11-06", 60));  // another machine, much slower
  pts.push_back(point("Zen 3", "base", "2026-11-07", 80));  // the same machine, 20% slower
  const auto series = series_of(pts);
  REQUIRE(series.size() == 2);
  CHECK(series[0].cpu_identity == "Zen 3");
  CHECK(series[0].points.size() == 6);
  const auto rows = check_series(series);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].position == band_position::below);
  CHECK(rows[1].position == band_position::unknown);  // one point: no band yet
  CHECK(history_markdown(series).find("### ci · Zen 4") != std::string::npos);
}
