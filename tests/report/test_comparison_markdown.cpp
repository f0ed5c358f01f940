#include <catch2/catch.hpp>

#include <string>

#include "report/comparison.hpp"
#include "report/comparison_markdown.hpp"
#include "sample_result.hpp"

using namespace attnbench;

TEST_CASE("compare markdown: no regression", "[report]") {
  const run_result r = testing::sample_result();
  const std::string md = comparison_markdown(compare_runs(r, r, {}, "base/results.json", "new/results.json"));
  INFO(md);
  CHECK(
      md.rfind("## attnbench compare: cpu-small\n\n**Result: no regression.** 2 compared: 2 SAME, 0 FASTER, "
               "0 NOISY; 0 added, 0 removed, 1 skipped.\n",
               0) == 0);
  CHECK_THAT(
      md, Catch::Contains("| BASE | `base/results.json` | cpu-small | `3f2a9c1` | 2025-06-01T12:00:00Z | AMD "
                          "EPYC 7B13 |"));
  CHECK_THAT(md, Catch::Contains("SLOWER or FASTER when p < 0.05 and the change exceeds 15%."));
  CHECK_THAT(
      md, Catch::Contains("change: the ratio of the geometric means − 1, in brackets its 95% CI (Welch t"));
  CHECK_THAT(md, Catch::Contains(
                     "| Variant | BASE (samples/s) | NEW (samples/s) | Change | p-value | Verdict | Check "
                     "| rel. L2 err |"));
  CHECK_THAT(md, Catch::Contains(
                     "| fp32-naive | 41.37 [40.96–41.79] (n=5) | 41.37 [40.96–41.79] (n=5) | +0.0% [-1.2%, "
                     "+1.2%] | 1 (asymptotic) | SAME | PASS → PASS | 0.00e+00 → 0.00e+00 |"));
  CHECK_THAT(md,
             Catch::Contains("| fp16-flash | n/a | n/a | — | — | skipped | SKIPPED → SKIPPED | n/a → n/a |"));
  CHECK_THAT(md, Catch::Contains("- fp16-flash: SKIPPED in BASE and NEW: flash backend"));
  CHECK(md.find("Warning") == std::string::npos);
}

TEST_CASE("compare markdown: regression, warnings, added and removed", "[report]") {
  const run_result base = testing::sample_result();
  run_result candidate =
      testing::with_throughput(base, 1, testing::scaled(base.variants[1].throughput.samples, 0.8));
  candidate.variants[0].check.status = status_kind::fail;
  candidate.variants[2].name = "fp16|flash";
  candidate.environment.device_name = "other CPU";
  const std::string md = comparison_markdown(compare_runs(base, candidate, {0.1, 0.05}));
  INFO(md);
  CHECK_THAT(
      md, Catch::Contains("**Result: REGRESSION.** 1 SLOWER by more than 10%: bf16-sdpa. 1 newly failing the "
                          "output check: fp32-naive.\n"));
  CHECK_THAT(md, Catch::Contains(
                     "> **Warning:** environment.device_name differs: BASE \"AMD EPYC 7B13\", NEW \"other "
                     "CPU\"  \n> The runs may not be comparable; `--strict` makes this an error (exit 2)."));
  // 0.8 × every sample: the geometric means change by exactly −20%, inside its Welch interval.
  CHECK_THAT(md,
             Catch::Contains("| bf16-sdpa | 98.06 [96.82–99.31] (n=5) | 78.44 [77.45–79.45] (n=5) | -20.0% "
                             "[-21.2%, -18.8%] | 0.0079 (exact) | **SLOWER** |"));
  CHECK_THAT(md,
             Catch::Contains("| fp32-naive | 41.37 [40.96–41.79] (n=5) | 41.37 [40.96–41.79] (n=5) | +0.0% "
                             "[-1.2%, +1.2%] | 1 (asymptotic) | SAME | **PASS → FAIL** |"));
  CHECK_THAT(md, Catch::Contains("| fp16\\|flash | — | n/a | — | — | added | — → SKIPPED | — → n/a |"));
  CHECK_THAT(md, Catch::Contains("| fp16-flash | n/a | — | — | — | removed | SKIPPED → — | n/a → — |"));
  CHECK_THAT(md, Catch::Contains("- fp32-naive: output check newly FAIL\n"));
}
