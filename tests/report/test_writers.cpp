#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "report/csv_writer.hpp"
#include "report/json_writer.hpp"
#include "report/make_writers.hpp"
#include "report/markdown_writer.hpp"
#include "report/result_json.hpp"
#include "report/svg_writer.hpp"
#include "sample_result.hpp"
#include "xml_check.hpp"

#ifndef ATTNBENCH_TEST_DATA_DIR
#error "define ATTNBENCH_TEST_DATA_DIR as the tests/ directory"
#endif

using namespace attnbench;

namespace {

std::string render(const writer_base& w, const run_result& r) {
  std::ostringstream out;
  w.write(r, out);
  return out.str();
}

// Compares with tests/report/golden/<file>; ATTNBENCH_UPDATE_GOLDEN=1 rewrites it instead.
void check_golden(const std::string& file, const std::string& actual) {
  const std::string path = std::string(ATTNBENCH_TEST_DATA_DIR) + "/report/golden/" + file;
  const char* update = std::getenv("ATTNBENCH_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("updated " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream expected;
  expected << in.rdbuf();
  CHECK(actual == expected.str());
}

}  // namespace

TEST_CASE("status names and all_passed", "[report]") {
  CHECK(to_string(status_kind::pass) == "PASS");
  CHECK(to_string(status_kind::fail) == "FAIL");
  CHECK(to_string(status_kind::skipped) == "SKIPPED");
  run_result r = testing::sample_result();
  CHECK(r.all_passed());  // SKIPPED does not fail a run
  r.variants[1].status = status_kind::fail;
  CHECK_FALSE(r.all_passed());
  CHECK(run_result{}.all_passed());
}

TEST_CASE("writers match the golden files", "[report]") {
  const run_result r = testing::sample_result();
  SECTION("json") { check_golden("results.json", render(json_writer{}, r)); }
  SECTION("csv") { check_golden("results.csv", render(csv_writer{}, r)); }
  SECTION("markdown") { check_golden("report.md", render(markdown_writer{"throughput.svg"}, r)); }
  SECTION("svg") { check_golden("throughput.svg", render(svg_writer{}, r)); }
  SECTION("server scenario, markdown") {
    check_golden("report-server.md", render(markdown_writer{}, testing::server_sample_result()));
  }
}

TEST_CASE("markdown: the chart only when one is written, new columns only when measured", "[report]") {
  const run_result r = testing::sample_result();
  const std::string with_chart = render(markdown_writer{"throughput.svg"}, r);
  CHECK_THAT(with_chart, Catch::Contains("![Throughput and speedup per variant](throughput.svg)"));
  const std::string without = render(markdown_writer{}, r);
  CHECK(without.find("![") == std::string::npos);
  // padding efficiency and mean batch size are always columns; a skipped variant shows n/a.
  CHECK_THAT(without, Catch::Contains("| fp32-naive | 5675 | 72.2% | 8.0 | 193.40 |"));
  CHECK_THAT(without, Catch::Contains("| fp16-flash | n/a | n/a | n/a |"));
  // No variant uses the cache, pooling or the server scenario: none of their columns or tables.
  CHECK(without.find("cache hit rate") == std::string::npos);
  CHECK(without.find("allocations/batch") == std::string::npos);
  CHECK(without.find("Server scenario") == std::string::npos);
  CHECK(without.find("Scenario:") == std::string::npos);

  const std::string server = render(markdown_writer{}, testing::server_sample_result());
  CHECK_THAT(server, Catch::Contains("Scenario: server, latency bound p99 ≤ 250.0 ms."));
  CHECK_THAT(server, Catch::Contains("| cache hit rate | allocations/batch |"));
  CHECK_THAT(server, Catch::Contains("| 72.2% | 8.0 | 81.20 | 92.40 | 25.0% | 0.00 |"));
  CHECK_THAT(server, Catch::Contains("| fp32-naive | 5675 | 72.2% | 8.0 | 193.40 | 215.20 | n/a | n/a |"));
  CHECK_THAT(server, Catch::Contains("### bf16-sdpa\n\nMax sustainable rate: 100.0 requests/s."));
  CHECK_THAT(server,
             Catch::Contains("| offered rate (req/s) | achieved (req/s) | p50 (ms) | p90 (ms) | p99 (ms) | "
                             "p99.9 (ms) | mean batch | within bound |"));
  CHECK_THAT(server, Catch::Contains("| 200.0 | 121.3 | 850.50 | 1400.20 | 1702.80 | 1850.10 | 8.0 | no |"));
  CHECK_THAT(server, Catch::Contains("| trace | 75.0 |"));
  CHECK(server.find("### fp32-naive") == std::string::npos);  // no sweep, no table
}

TEST_CASE("markdown, csv: how the rounds went, and a noisy variant flagged", "[report][repetitions]") {
  run_result r = testing::sample_result();
  const std::string md = render(markdown_writer{}, r);
  CHECK_THAT(md,
             Catch::Contains("Repetitions: adaptive, rounds added until every 95% interval (throughput, "
                             "speedup) is within ±2.0%, within a 60 s budget; stopped after 5 rounds: time "
                             "budget reached. 1 variant missed the target and is flagged (noisy)"));
  CHECK_THAT(md, Catch::Contains("| bf16-sdpa (noisy) |"));
  CHECK_THAT(md, Catch::Contains("| 5 (±0.8%) |"));  // the baseline: its throughput interval
  CHECK_THAT(md, Catch::Contains("| 5 (±2.4%) |"));  // bf16-sdpa: the wider of its two
  const std::string csv = render(csv_writer{}, r);
  CHECK_THAT(csv,
             Catch::Contains(",rounds,throughput_rel_half_width,speedup_rel_half_width,target_met,noisy,"));
  CHECK_THAT(csv, Catch::Contains(",5,0.0113,0.0241,false,true,"));  // then its metrics
  r.repetition_mode = "fixed";
  for (auto& v : r.variants) v.repetition = {};
  const std::string fixed = render(markdown_writer{}, r);
  CHECK_THAT(fixed, Catch::Contains("Repetitions: fixed, 5 rounds."));
  CHECK(fixed.find("(noisy)") == std::string::npos);
  CHECK(render(csv_writer{}, r).find("noisy") == std::string::npos);
}

TEST_CASE("svg chart: one bar per variant that ran, in each panel, FAIL marked, SKIPPED without a bar",
          "[report]") {
  run_result r = testing::sample_result();
  const std::string svg = render(svg_writer{}, r);
  INFO(svg);
  CHECK(testing::xml_problem(svg).empty());
  CHECK(testing::count_of(svg, "<rect class=\"bar\"") == 4);  // 2 ran × (throughput, speedup)
  CHECK_THAT(svg, Catch::Contains(
                      ">skipped: flash backend needs a CUDA device, this run is on &quot;cpu&quot;</text>"));
  CHECK_THAT(svg, Catch::Contains(">98.06</text>"));  // the geometric mean, as every report prints
  CHECK_THAT(svg, Catch::Contains(">1.00× (baseline)</text>"));
  CHECK(svg.find("#e15759") == std::string::npos);

  r.variants[1].status = status_kind::fail;
  r.variants[1].name = "<b>&co";
  const std::string failed = render(svg_writer{}, r);
  CHECK(testing::xml_problem(failed).empty());
  CHECK(testing::count_of(failed, "<rect class=\"bar\"") == 4);  // a FAIL still ran: it is drawn, in red
  CHECK(testing::count_of(failed, "<rect class=\"bar\" fill=\"#e15759\"") == 2);
  CHECK_THAT(failed, Catch::Contains(">98.06 (FAIL)</text>"));
  CHECK_THAT(failed, Catch::Contains("&lt;b&gt;&amp;co"));

  r.variants = {};
  const std::string empty = render(svg_writer{}, r);
  CHECK(testing::xml_problem(empty).empty());
  CHECK(testing::count_of(empty, "<rect class=\"bar\"") == 0);
  CHECK_THAT(empty, Catch::Contains(">no variants</text>"));
}

TEST_CASE("csv quotes per RFC 4180 and leaves undefined values empty", "[report]") {
  const std::string csv = render(csv_writer{}, testing::sample_result());
  CHECK(csv.find(R"(,"static bs=8, pad=longest",)") != std::string::npos);
  CHECK(csv.find(R"(,"flash backend needs a CUDA device, this run is on ""cpu""")") != std::string::npos);
  CHECK(csv.find("fp16-flash,SKIPPED,amp-fp16,fp16,sdpa,,\"static bs=8, "
                 "pad=longest\",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\"flash") != std::string::npos);
  CHECK(csv.find("nan") == std::string::npos);
}

TEST_CASE("csv: padding, batch size, cache and sustainable-rate columns", "[report]") {
  const std::string csv = render(csv_writer{}, testing::server_sample_result());
  CHECK_THAT(csv,
             Catch::Contains(",top1_agreement_decisive,predictions_kept,predictions_total,exempt_flips,"
                             "topk_overlap,padding_efficiency,mean_batch_size,cache_hit_rate,"
                             "max_sustainable_rate,reason,"));
  CHECK_THAT(csv, Catch::Contains(",0.721875,8,0.25,100,,"));  // bf16-sdpa: every column
  CHECK_THAT(csv, Catch::Contains(",0.721875,8,,,,"));         // fp32-naive: no cache, no sweep
}

TEST_CASE("csv: offload columns appear only when a variant offloaded", "[report][offload]") {
  run_result r = testing::sample_result();
  r.variants[1].offload.used = true;
  r.variants[1].offload.resident_weight_bytes = 1000;
  r.variants[1].offload.full_weight_bytes = 4000;
  r.variants[1].offload.bytes_per_pass = 12000;
  r.variants[1].offload.copy_ms_per_pass = 2.5;
  r.variants[1].offload.exposed_ms_per_pass = 0.5;
  r.variants[1].offload.h2d_gb_per_s = 4.8;
  const std::string csv = render(csv_writer{}, r);
  CHECK_THAT(csv,
             Catch::Contains(",reason,offload_resident_weight_bytes,offload_full_weight_bytes,"
                             "offload_bytes_per_pass,offload_copy_ms_per_pass,offload_exposed_ms_per_pass,"
                             "offload_h2d_gb_per_s,offload_d2h_bytes_per_pass,"));
  CHECK_THAT(csv, Catch::Contains(",1000,4000,12000,2.5,0.5,4.8,0,"));  // inference: nothing copied back
  CHECK_THAT(csv, Catch::Contains(",,,,,,,5,"));                        // the others: empty offload fields
  CHECK(render(csv_writer{}, testing::sample_result()).find("offload_") == std::string::npos);
}

TEST_CASE("markdown headline table", "[report]") {
  run_result r = testing::sample_result();
  r.variants[1].name = "a|b";
  const std::string table = markdown_table(r);
  CHECK(table.rfind("| Method | Throughput (samples/s) | Speedup vs baseline | Output check |\n"
                    "| --- | ---: | ---: | --- |\n",
                    0) == 0);
  // The verdict with the predictions it kept, over all samples, beside the speed (console too).
  CHECK(table.find("| 2.37× [2.36–2.38] | PASS, predictions kept 255 of 256 (1 excused by the float64 study) |") !=
        std::string::npos);
  // Each cell is one statistic: the geometric mean, in brackets its own 95% interval.
  CHECK(table.find("| fp32-naive | 41.37 [40.96–41.79] | 1.00× (baseline) |") != std::string::npos);
  CHECK(table.find("| a\\|b (noisy) | 98.06 [96.82–99.31] | 2.37× [2.36–2.38] |") != std::string::npos);
  CHECK(table.find("| fp16-flash | — | — (skipped: ") != std::string::npos);
  r.variants[1].status = status_kind::fail;
  CHECK(markdown_table(r).find("| a\\|b (FAIL) (noisy) |") != std::string::npos);
  // One round: the centre, and no interval — said, not left out.
  r.variants[1].status = status_kind::pass;
  r.variants[1].throughput = summarize({82.0});
  r.variants[1].speedup = speedup_of({82.0}, {41.0});
  CHECK(markdown_table(r).find("| a\\|b (noisy) | 82.00 [n/a] | 2.00× [n/a] |") != std::string::npos);
}

TEST_CASE("writers: an embedding run shows per-sample cosines and its nearest-neighbour predictions", "[report]") {
  const run_result r = testing::embedding_sample_result();
  const std::string md = render(markdown_writer{}, r);
  INFO(md);
  CHECK(md.find("top-1") == std::string::npos);
  CHECK_THAT(md, Catch::Contains("| rel. L2 err | predictions kept | cosine min (mean) | status |"));
  CHECK_THAT(md, Catch::Contains("| 3.42e-03 | n/a | 0.999870 (0.999994) | PASS |"));  // a file without the count
  CHECK_THAT(md, Catch::Contains("| fp16-flash |") && Catch::Contains("| n/a | n/a | n/a | SKIPPED |"));
  // A logits run keeps its top-1 column and has no cosine one.
  const std::string logits = render(markdown_writer{}, testing::sample_result());
  CHECK_THAT(logits, Catch::Contains("| rel. L2 err | predictions kept | status |"));
  CHECK_THAT(logits, Catch::Contains("| 255 of 256 (1 excused by the float64 study) | PASS |"));
  CHECK_THAT(logits, Catch::Contains("Predictions kept: samples whose prediction (top-1 class) is the baseline's"));
  CHECK(logits.find("cosine min") == std::string::npos);

  const std::string csv = render(csv_writer{}, r);
  INFO(csv);
  CHECK_THAT(csv, Catch::Contains(",cosine,check_output,cosine_min,cosine_mean,top1_agreement,"
                                  "top1_agreement_decisive,"));
  CHECK_THAT(csv, Catch::Contains(",0.99999,embedding,0.99987,0.999994,,,"));  // top-1 fields empty

  const auto j = nlohmann::ordered_json::parse(render(json_writer{}, r));
  const auto& check = j["variants"][1]["check"];
  CHECK(check["output"] == "embedding");
  CHECK(check["cosine_min"] == 0.99987);
  CHECK(check["top1_agreement"].is_null());
  CHECK(check["top1_agreement_decisive"].is_null());
  CHECK(check["decisive_samples"].is_null());
  CHECK(check["predictions_kept"].is_null());
  CHECK(check["samples"].is_null());
}

TEST_CASE("a check on random weights says so beside its verdict", "[report]") {
  run_result r = testing::sample_result();
  for (auto& v : r.variants) v.check.random_weights = true;
  const std::string md = render(markdown_writer{}, r);
  CHECK_THAT(md, Catch::Contains("PASS (numerical check, random weights)"));
  CHECK_THAT(markdown_table(r), Catch::Contains("PASS (numerical check, random weights), predictions kept"));
  r.check.random_weights = true;
  r.check.rule = top1_rule_text;
  const auto j = nlohmann::ordered_json::parse(render(json_writer{}, r));
  CHECK(j["check"]["random_weights"] == true);
  CHECK(j["variants"][1]["check"]["random_weights"] == true);
  CHECK(run_result_from_json(j).check.rule == top1_rule_text);
}

TEST_CASE("make_writers", "[report]") {
  const auto writers = make_writers({"md", "json", "csv"});
  REQUIRE(writers.size() == 4);
  CHECK(writers[0]->name() == "md");
  CHECK(writers[0]->file_name() == "report.md");
  CHECK(writers[1]->name() == "svg");  // the chart report.md shows comes with it
  CHECK(writers[1]->file_name() == "throughput.svg");
  CHECK(writers[2]->file_name() == "results.json");
  CHECK(writers[3]->file_name() == "results.csv");
  CHECK_THAT(render(*writers[0], testing::sample_result()), Catch::Contains("](throughput.svg)"));
  const auto svg_listed = make_writers({"svg", "md"});
  REQUIRE(svg_listed.size() == 2);
  CHECK(svg_listed[0]->name() == "svg");
  CHECK(svg_listed[1]->name() == "md");
  CHECK(make_writers({"svg"}).size() == 1);
  CHECK(make_writers({}).empty());
  CHECK_THROWS_AS(make_writers({"xml"}), input_error);
  CHECK_THROWS_WITH(make_writers({"json", "json"}), Catch::Contains("more than once"));
}

TEST_CASE("writers render technique metrics without knowing the technique", "[report][metrics]") {
  run_result r = testing::sample_result();
  SECTION("markdown: one row per metric, scaled by unit, n/a with its reason") {
    const std::string md = render(markdown_writer{}, r);
    CHECK_THAT(md, Catch::Contains("## Technique metrics"));
    CHECK_THAT(md, Catch::Contains("| bf16-sdpa | `resident_weight_bytes` | 21.3 MiB | lower is better | weights held on "
                            "the device |"));
    CHECK_THAT(md, Catch::Contains("| bf16-sdpa | `overlap_share` | n/a | higher is better | copy time hidden under "
                            "compute (no copy stream on the CPU) |"));
  }
  SECTION("csv: a column per metric name, empty where a variant has none or it is n/a") {
    const std::string csv = render(csv_writer{}, r);
    const std::string header = csv.substr(0, csv.find('\n'));
    CHECK_THAT(header, Catch::EndsWith(",metric_resident_weight_bytes,metric_overlap_share"));
    CHECK_THAT(csv, Catch::Contains(",22341124,\n"));  // bf16-sdpa: bytes, then an empty n/a
    CHECK_THAT(csv, Catch::Contains("fp32-naive,PASS"));
  }
  SECTION("no metrics: no section, no columns") {
    for (auto& v : r.variants) v.metrics.clear();
    CHECK_THAT(render(markdown_writer{}, r), !Catch::Contains("Technique metrics"));
    CHECK_THAT(render(csv_writer{}, r), !Catch::Contains("metric_"));
  }
}
