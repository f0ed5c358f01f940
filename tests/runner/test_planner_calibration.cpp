// The cost planner's overhead fit from two timings, on numbers chosen here: a usable fit, and the
// three ways a disturbed timing shows itself, each refused with the reason.
#include "runner/planner_calibration.hpp"

#include <catch2/catch.hpp>

using namespace attnbench;

TEST_CASE("planner calibration: the overhead fit and the fits it refuses", "[runner][workload]") {
  // One row 3.649 ms, 64 rows 118.405 ms (a quiet run of configs/planner-cpu.json's fp32 setting),
  // one row of 44 tokens modelled as 50 token-equivalents.
  const overhead_fit ok = fit_overhead(3.649e-3, 118.405e-3, 64, 50);
  REQUIRE(ok.rejected.empty());
  const double row_s = (118.405e-3 - 3.649e-3) / 63;
  CHECK(ok.token_s == Approx(row_s / 50));
  CHECK(ok.overhead_s == Approx(3.649e-3 - row_s));
  CHECK(ok.per_batch == Approx((3.649e-3 - row_s) / (row_s / 50)));
  CHECK(ok.per_batch > 0);
  CHECK(ok.per_batch < 64 * 50);

  // The full batch no slower than one row.
  CHECK_THAT(fit_overhead(5e-3, 4e-3, 64, 50).rejected, Catch::Contains("no slower than 1"));
  // No intercept: 64 rows cost more than 64 times one row.
  CHECK_THAT(fit_overhead(1e-3, 100e-3, 64, 50).rejected, Catch::Contains("no per-batch overhead"));
  // One row disturbed to take nearly as long as the full batch: an overhead above the full
  // batch's own work (436 ms against 440 ms, as a run during a concurrent build measured).
  const overhead_fit disturbed = fit_overhead(436e-3, 440e-3, 64, 50);
  CHECK_THAT(disturbed.rejected, Catch::Contains("exceeds the full batch's own work"));
  CHECK_THAT(disturbed.rejected, Catch::Contains("1 row 436.000 ms, 64 rows 440.000 ms"));
}
