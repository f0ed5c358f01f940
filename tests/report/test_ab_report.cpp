#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "report/ab_report.hpp"
#include "sample_result.hpp"
#include "stats/summary.hpp"

using namespace attnbench;

namespace {

speedup_summary ratio(double c, double lo, double hi) {
  speedup_summary s;
  s.geomean = c;
  s.geomean_ci_low = lo;
  s.geomean_ci_high = hi;
  s.method = speedup_method::paired;
  return s;
}

// The two-variant run the measurement core makes of one variant: base, then candidate whose
// per-round throughputs are the base's times `factor` (times a per-round wobble).
run_result pair_run(double factor, double wobble) {
  run_result r;
  r.name = "ci-ab";
  r.baseline = "base";
  r.stop_reason = "target met";
  std::vector<double> base{100, 104, 97, 101, 99, 103}, cand;
  for (std::size_t i = 0; i < base.size(); ++i) cand.push_back(base[i] * factor * (1 + (i % 2 ? wobble : -wobble)));
  variant_result b, c;
  b.name = "base";
  b.is_baseline = true;
  b.status = status_kind::pass;
  b.throughput = summarize(base);
  b.repetition.rounds = 6;
  c.name = "candidate";
  c.status = status_kind::pass;
  c.check = testing::logits_check(1e-5, 0, 0, 1, 1);
  c.throughput = summarize(cand);
  c.speedup = speedup_of(cand, base);
  c.repetition.rounds = 6;
  r.variants = {b, c};
  return r;
}

}  // namespace

TEST_CASE("ab: the verdict is read from the ratio's interval and the threshold", "[report]") {
  CHECK(ratio_verdict(ratio(0.90, 0.88, 0.92), 0.05) == ab_verdict::slower);
  CHECK(ratio_verdict(ratio(1.10, 1.08, 1.12), 0.05) == ab_verdict::faster);
  // Significant but within the threshold: SAME.
  CHECK(ratio_verdict(ratio(0.97, 0.96, 0.98), 0.05) == ab_verdict::same);
  // Beyond the threshold but the interval holds 1: not shown to be slower.
  CHECK(ratio_verdict(ratio(0.90, 0.78, 1.02), 0.05) == ab_verdict::same);
  // The threshold is symmetric on the log scale: 1 / 1.05 = 0.952 is the edge of SLOWER.
  CHECK(ratio_verdict(ratio(0.953, 0.94, 0.96), 0.05) == ab_verdict::same);
  CHECK(ratio_verdict(ratio(0.951, 0.94, 0.96), 0.05) == ab_verdict::slower);
  // No interval (fewer than 2 rounds): no claim.
  CHECK(ratio_verdict(ratio(0.5, not_a_number, not_a_number), 0.05) == ab_verdict::same);
}

TEST_CASE("ab: a row from the paired run: ratio, verdict, half-width, FAIL on different outputs", "[report]") {
  const ab_row slow = ab_row_of("v", pair_run(0.9, 0.005), 0.05);
  CHECK(slow.verdict == ab_verdict::slower);
  CHECK(slow.ratio.method == speedup_method::paired);
  CHECK(slow.ratio.geomean == Approx(slow.candidate.throughput.geomean / slow.base.throughput.geomean));
  CHECK(slow.ratio_rel_half_width ==
        Approx((slow.ratio.geomean_ci_high - slow.ratio.geomean_ci_low) / 2 / slow.ratio.geomean));
  CHECK(slow.rounds == 6);

  CHECK(ab_row_of("v", pair_run(1.0, 0.005), 0.05).verdict == ab_verdict::same);

  run_result wrong = pair_run(1.5, 0.005);  // faster, but computing something else
  wrong.variants[1].check.status = status_kind::fail;
  wrong.variants[1].check.message = "relative L2 error 0.1 > tolerance 1e-05";
  wrong.variants[1].status = status_kind::fail;
  wrong.variants[1].reason = wrong.variants[1].check.message;
  const ab_row row = ab_row_of("v", wrong, 0.05);
  CHECK(row.verdict == ab_verdict::fail);
  CHECK(row.reason.find("outputs differ") != std::string::npos);

  ab_report report;
  report.config_name = "ci-ab";
  report.rows = {ab_row_of("same", pair_run(1.0, 0.005), 0.05)};
  CHECK_FALSE(report.regressed());
  report.rows.push_back(row);
  CHECK(report.regressed());
  const auto json = ab_report_to_json(report);
  CHECK(json["variants"][1]["verdict"] == "FAIL");
  CHECK(json["regressed"] == true);
  const junit_suite suite = junit_suite_of(report);
  REQUIRE(suite.cases.size() == 2);
  CHECK(suite.cases[0].result == junit_case::outcome::passed);
  CHECK(suite.cases[1].result == junit_case::outcome::failed);
  CHECK(ab_report_markdown(report).find("REGRESSION") != std::string::npos);
}
