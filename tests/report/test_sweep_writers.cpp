#include "report/sweep_writers.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "common/error.hpp"
#include "report/metric_text.hpp"
#include "report/result_json.hpp"
#include "report/svg_line_chart.hpp"
#include "report/sweep_result_json.hpp"
#include "sample_result.hpp"
#include "xml_check.hpp"

using namespace attnbench;
using Catch::Matchers::Contains;
using testing::count_of;
using testing::xml_problem;

namespace {

// Two axes, batch_size varying (3 values) and precision fixed; each point the sample run.
sweep_result sample_sweep() {
  sweep_result s;
  s.name = "sweep-test";
  s.axes = {{"batch_size", {"1", "2", "4"}, true}, {"precision", {"fp32"}, false}};
  for (const char* bs : {"1", "2", "4"}) {
    sweep_point_result p;
    p.params = {{"batch_size", bs}, {"precision", "fp32"}};
    p.result = testing::sample_result();
    s.points.push_back(p);
  }
  return s;
}

size_t lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("sweep CSV: the axes' columns first, a row per point and variant", "[report][sweep]") {
  const sweep_result s = sample_sweep();
  const std::string csv = sweep_csv(s);
  const size_t variants = s.points[0].result.variants.size();
  CHECK(lines(csv) == 1 + 3 * variants);
  CHECK(csv.rfind("batch_size,precision,name,status,", 0) == 0);
  CHECK_THAT(csv, Contains("\n4,fp32," + s.points[2].result.variants[0].name + ","));
}

TEST_CASE("sweep markdown: summary with only the varying axes, then a table per point", "[report][sweep]") {
  const sweep_result s = sample_sweep();
  const std::string md = sweep_markdown(s, "sweep.svg");
  CHECK_THAT(md, Contains("| batch_size | Method | Throughput (samples/s) |"));
  CHECK_THAT(md, !Contains("| precision |"));  // one value: not a column
  CHECK_THAT(md, Contains("![Throughput against the swept axis](sweep.svg)"));
  CHECK(count_of(md, "\n### batch_size=") == 3);
  CHECK_THAT(md, Contains("### batch_size=4 precision=fp32"));
}

TEST_CASE("sweep chart: well-formed, one line per variant over the swept axis", "[report][sweep]") {
  sweep_result s = sample_sweep();
  const std::string svg = sweep_svg(s);
  INFO(svg);
  CHECK(xml_problem(svg).empty());
  size_t runnable = 0;
  for (const auto& v : s.points[0].result.variants) runnable += v.status == status_kind::skipped ? 0 : 1;
  CHECK(count_of(svg, "<g class=\"series\">") == s.points[0].result.variants.size());
  CHECK(count_of(svg, "<polyline") == runnable);  // skipped variants have no points to join
  CHECK(count_of(svg, "<circle") == 3 * runnable);
  CHECK_THAT(svg, Contains(">batch_size</text>"));

  // A second varying axis splits each variant into one line per value of it.
  s.axes[1].values = {"fp32", "amp-bf16"};
  auto more = s.points;
  for (auto& p : more) p.params[1].second = "amp-bf16";
  s.points.insert(s.points.end(), more.begin(), more.end());
  const std::string two = sweep_svg(s);
  CHECK(xml_problem(two).empty());
  CHECK(count_of(two, "<g class=\"series\">") == 2 * s.points[0].result.variants.size());
  CHECK_THAT(two, Contains("(precision=amp-bf16)"));
}

TEST_CASE("line chart: NaN breaks a line, whiskers drawn, empty input renders", "[report][sweep]") {
  const double nan = not_a_number;
  const std::string svg = svg_line_chart("t", "x", {"1", "2", "3", "4"}, "y",
                                         {{"a", {1, 2, nan, 4}, {0.5, 1.5, nan, 3}, {1.5, 2.5, nan, 5}}});
  CHECK(xml_problem(svg).empty());
  CHECK(count_of(svg, "<polyline") == 1);  // 1–2 joined; 4 stands alone
  CHECK(count_of(svg, "<circle") == 3);
  CHECK(xml_problem(svg_line_chart("t", "x", {}, "y", {})).empty());
}

TEST_CASE("sweep JSON round-trips, and a sweep compares as variants named by point", "[report][sweep]") {
  const sweep_result s = sample_sweep();
  const auto j = sweep_result_to_json(s);
  CHECK(is_sweep_json(j));
  const sweep_result back = sweep_result_from_json(j);
  REQUIRE(back.points.size() == 3);
  CHECK(back.points[1].label() == "batch_size=2 precision=fp32");
  CHECK(back.axes[0].numeric);
  CHECK(back.points[2].result.variants[0].throughput.median ==
        s.points[2].result.variants[0].throughput.median);
  const run_result flat = flatten_sweep(back);
  CHECK(flat.variants.size() == 3 * s.points[0].result.variants.size());
  CHECK(flat.variants[0].name == s.points[0].result.variants[0].name + " [batch_size=1 precision=fp32]");

  auto broken = j;
  broken["points"][1]["result"].erase("variants");
  CHECK_THROWS_WITH(sweep_result_from_json(broken), Contains("points[1].result"));
}

TEST_CASE("a sweep document's mistyped kind or numeric is an input error, not a JSON type error", "[report][sweep]") {
  // tests/fuzz/corpus/results/sweep-kind-not-a-string.json, sweep-numeric-not-a-bool.json: both
  // escaped compare as nlohmann's type_error (exit 4, no file named).
  const auto j = sweep_result_to_json(sample_sweep());
  auto kind = j;
  kind["kind"] = 1;
  CHECK_FALSE(is_sweep_json(kind));  // then read as a run's document, which names what is missing
  CHECK_FALSE(is_sweep_json(nlohmann::ordered_json::array()));
  auto numeric = j;
  numeric["axes"][0]["numeric"] = "yes";
  CHECK_THROWS_AS(sweep_result_from_json(numeric), input_error);
  CHECK_THROWS_WITH(sweep_result_from_json(numeric), "axes[0].numeric: expected true or false");
  numeric["axes"][0].erase("numeric");
  CHECK_FALSE(sweep_result_from_json(numeric).axes[0].numeric);
}

TEST_CASE("a test axis adds llama-bench's table: pp reads the prefill rate, tg the decode rate", "[report][sweep][decoder]") {
  // The interval travels in the metric's note, written and read by one pair of functions.
  metric m{"decode_tokens_per_s", 34.2, "tokens/s", metric_direction::higher_is_better, "generate", "",
           interval_note(33.75, 34.5, "tokens/s", 11)};
  const auto ci = metric_interval(m);
  REQUIRE(ci);
  CHECK(ci->first == 33.75);
  CHECK(ci->second == 34.5);
  m.note = "max_new_tokens is 1: no decode step";
  CHECK_FALSE(metric_interval(m));

  CHECK(llama_bench_table(sample_sweep()).empty());  // no test axis: no table, no section
  CHECK_THAT(sweep_markdown(sample_sweep(), ""), !Contains("llama-bench"));

  sweep_result s;
  s.name = "grid";
  s.axes = {{"test", {"pp16", "tg8"}, false}};
  for (const char* test : {"pp16", "tg8"}) {
    sweep_point_result p;
    p.params = {{"test", test}};
    p.result = testing::sample_result();
    p.result.model.preset = "llama-tiny";
    p.result.model.parameters = 1234567;
    p.result.environment.device = "cpu";
    p.result.environment.threads = 2;
    p.result.variants.resize(2);
    p.result.baseline = p.result.variants[0].name;
    for (auto& v : p.result.variants) {
      v.status = status_kind::pass;
      v.metrics = {{"prefill_tokens_per_s", 700, "tokens/s", metric_direction::higher_is_better, "generate", "",
                    interval_note(690, 710, "tokens/s", 5)},
                   {"decode_tokens_per_s", test[0] == 'p' ? not_a_number : 34.0, "tokens/s",
                    metric_direction::higher_is_better, "generate", "",
                    test[0] == 'p' ? "max_new_tokens is 1: no decode step" : interval_note(33, 35, "tokens/s", 5)},
                   {"weight_bytes", 3.0 * 1024 * 1024, metric_unit::bytes, metric_direction::lower_is_better,
                    "generate", "", ""}};
    }
    p.result.variants[1].status = status_kind::fail;
    s.points.push_back(p);
  }
  const std::string table = llama_bench_table(s);
  CHECK(table.rfind("| model | size | params | backend | threads | variant | test | t/s | check |\n", 0) == 0);
  const std::string base = s.points[0].result.variants[0].name, other = s.points[0].result.variants[1].name;
  CHECK_THAT(table, Contains("| llama-tiny | 3.0 MiB | 1.23 M | CPU | 2 | " + base +
                             " | pp16 | 700.00 [690.00–710.00] | PASS (baseline) |"));
  CHECK_THAT(table, Contains("| " + other + " | tg8 | 34.00 [33.00–35.00] | FAIL |"));
  CHECK(lines(table) == 2 + 4);
  CHECK_THAT(sweep_markdown(s, ""), Contains("## llama-bench table") && Contains(table));
}
