#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <string>

#include "report/comparison.hpp"
#include "report/junit_writer.hpp"
#include "sample_result.hpp"
#include "xml_check.hpp"

using namespace attnbench;
using testing::count_of;
using testing::xml_problem;

TEST_CASE("junit: one test case per variant check of a run", "[report]") {
  run_result r = testing::sample_result();
  r.variants[1].status = status_kind::fail;
  r.variants[1].check.status = status_kind::fail;
  r.variants[1].check.message = "rel_l2 0.3 > tolerance 0.02 & 3 samples disagree";
  const std::string xml = junit_xml(junit_suite_of(r));
  INFO(xml);
  CHECK(xml_problem(xml).empty());
  CHECK(count_of(xml, "<testcase ") == 3);
  CHECK_THAT(xml,
             Catch::Contains(
                 "<testsuites name=\"attnbench\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  CHECK_THAT(xml, Catch::Contains(
                      "<testsuite name=\"cpu-small\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  CHECK_THAT(xml, Catch::Contains("timestamp=\"2025-06-01T12:00:00Z\" hostname=\"bench-01\">"));
  // The baseline passed: an empty element. Its time is the timed passes: Σ 256 / samples/s.
  const double seconds = 256 / 41.20 + 256 / 41.85 + 256 / 40.97 + 256 / 41.52 + 256 / 41.33;
  CHECK_THAT(xml, Catch::Contains(fmt::format(
                      "<testcase classname=\"cpu-small\" name=\"fp32-naive\" time=\"{:.3f}\"/>", seconds)));
  CHECK_THAT(xml, Catch::Contains("name=\"bf16-sdpa\"") &&
                      Catch::Contains(
                          "<failure message=\"rel_l2 0.3 &gt; tolerance 0.02 &amp; 3 samples disagree\">"));
  CHECK_THAT(xml, Catch::Contains("rel_l2 0.00342 (tolerance 0.02)"));
  CHECK_THAT(xml, Catch::Contains(
                      "name=\"fp16-flash\" time=\"0.000\">\n      <skipped message=\"flash backend needs a "
                      "CUDA device, this run is on &quot;cpu&quot;\"/>"));
}

TEST_CASE("junit: a failed embedding check reports cosines, never top-1", "[report]") {
  run_result r = testing::embedding_sample_result();
  r.variants[1].status = status_kind::fail;
  r.variants[1].check.status = status_kind::fail;
  r.variants[1].check.message = "1 of 256 samples have cosine similarity below 0.999200";
  const std::string xml = junit_xml(junit_suite_of(r));
  INFO(xml);
  CHECK(xml_problem(xml).empty());
  CHECK_THAT(xml, Catch::Contains("output embedding"));
  CHECK_THAT(xml, Catch::Contains("cosine per sample: min 0.999870 (bound 0.996795), mean 0.999994"));
  CHECK(xml.find("top1") == std::string::npos);
  // Logits keep their top-1 lines.
  run_result logits = testing::sample_result();
  logits.variants[1].check.status = status_kind::fail;
  CHECK_THAT(junit_xml(junit_suite_of(logits)),
             Catch::Contains("top1_agreement_decisive 1 over 250 samples"));
}

TEST_CASE("junit: one test case per compare verdict", "[report]") {
  const run_result base = testing::sample_result();
  run_result candidate =
      testing::with_throughput(base, 0, testing::scaled(base.variants[0].throughput.samples, 0.8));
  candidate.variants[1].status = status_kind::fail;
  candidate.variants[1].check.status = status_kind::fail;
  candidate.variants.push_back(base.variants[0]);
  candidate.variants.back().name = "added <one>";
  const comparison c = compare_runs(base, candidate, {});
  const std::string xml = junit_xml(junit_suite_of(c));
  INFO(xml);
  CHECK(xml_problem(xml).empty());
  CHECK(count_of(xml, "<testcase ") == 4);
  CHECK_THAT(xml,
             Catch::Contains("<testsuite name=\"compare.cpu-small\" tests=\"4\" failures=\"2\" errors=\"0\" "
                             "skipped=\"1\""));
  CHECK_THAT(xml, Catch::Contains("classname=\"compare.cpu-small\" name=\"fp32-naive\"") &&
                      Catch::Contains(
                          "<failure message=\"SLOWER: throughput -20.0% (p = 0.00794, exact), beyond the "
                          "15% threshold\">"));
  CHECK_THAT(xml, Catch::Contains("<failure message=\"output check newly FAIL (BASE PASS, NEW FAIL)\">"));
  // Each side: the geometric mean with its own interval.
  CHECK_THAT(
      xml, Catch::Contains("BASE: PASS (check PASS, rel_l2 0), geometric mean 41.37 samples/s [40.96–41.79] "
                           "over 5 repetitions"));
  CHECK_THAT(xml, Catch::Contains("<skipped message=\"SKIPPED in BASE and NEW: flash backend"));
  CHECK_THAT(xml, Catch::Contains("name=\"added &lt;one&gt;\" time=\"0.000\"/>"));
}

TEST_CASE("junit: an empty suite is still a document", "[report]") {
  const std::string xml = junit_xml(junit_suite{"empty", "", "", {}});
  CHECK(xml_problem(xml).empty());
  CHECK_THAT(
      xml, Catch::Contains("<testsuite name=\"empty\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\" "
                           "time=\"0.000\">"));
}

TEST_CASE("junit: a noisy variant says so in its system-out", "[report][repetitions]") {
  const std::string xml = junit_xml(junit_suite_of(testing::sample_result()));
  INFO(xml);
  CHECK(xml_problem(xml).empty());
  CHECK_THAT(xml,
             Catch::Contains("<system-out>noisy: after 5 rounds the throughput interval is ±1.1% and the "
                             "speedup interval ±2.4%, wider than the run target ±2.0%</system-out>"));
  CHECK(count_of(xml, "<system-out>") == 1);  // the baseline met its target
}

TEST_CASE("junit: technique metrics are properties of their variant's case", "[report][metrics]") {
  const std::string xml = junit_xml(junit_suite_of(testing::sample_result()));
  INFO(xml);
  CHECK(xml_problem(xml).empty());
  CHECK_THAT(xml, Catch::Contains("<property name=\"metric.resident_weight_bytes\" value=\"22341124 bytes\"/>"));
  CHECK_THAT(xml, Catch::Contains(
                      "<property name=\"metric.overlap_share\" value=\"n/a: no copy stream on the CPU\"/>"));
  CHECK(count_of(xml, "<properties>") == 1);  // only bf16-sdpa reported any
}
