// The dynamic-batching and server-scenario parts of the schema.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "workload/dataset.hpp"
#include "workload/workload_checks.hpp"

#include "test_support.hpp"

using namespace attnbench;
using ordered_json = nlohmann::ordered_json;

namespace {

ordered_json base() {
  return ordered_json::parse(R"({
    "name": "t",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 8, "lengths": {"kind": "uniform", "min": 4, "max": 40}, "max_length": 40},
    "variants": [{"name": "fp32"},
                 {"name": "dyn", "batching": {"kind": "dynamic", "max_tokens": 256, "max_batch_size": 16,
                                              "pool": true, "cache": true}}],
    "baseline": "fp32"
  })");
}

using testing::parse;
using testing::problems_of;

}  // namespace

TEST_CASE("a dynamic batching block is read with its defaults", "[config]") {
  const config c = parse(base());
  const auto& b = c.variants[1].batching;
  CHECK(b.kind == "dynamic");
  CHECK(b.max_tokens == 256);
  CHECK(b.max_batch_size == 16);
  CHECK(b.grouping == grouping_kind::sorted);
  CHECK(b.pool);
  CHECK(b.cache);
  CHECK(b.max_batch() == 16);
  CHECK(c.scenario == "offline");
  CHECK_FALSE(c.measure.assemble_inputs);
}

TEST_CASE("dynamic batching mistakes name their paths", "[config]") {
  auto doc = base();
  doc["variants"][1]["batching"] = {{"kind", "dynamic"}, {"batch_size", 4}, {"grouping", "bucketed"}};
  auto ps = problems_of(doc);
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].path == "variants[1].batching.batch_size");  // a static key on a dynamic block
  CHECK(ps[1].path == "variants[1].batching.max_tokens");
  CHECK(ps[2].path == "variants[1].batching.boundaries");

  doc["variants"][1]["batching"] = {{"kind", "dynamic"}, {"max_tokens", 64}, {"grouping", "bucketed"},
                                    {"boundaries", {16, 8}}};
  ps = problems_of(doc);
  REQUIRE(ps.size() == 2);
  CHECK(ps[0].path == "variants[1].batching.boundaries[1]");
  CHECK_THAT(ps[0].message, Catch::Contains("ascend"));
  CHECK(ps[1].path == "variants[1].batching.boundaries");  // the last bound is below max_length
}

TEST_CASE("the dynamic planner: cost by default, greedy selectable, anything else refused", "[config]") {
  auto doc = base();
  CHECK(parse(doc).variants[1].batching.planner == planner_kind::cost);
  doc["variants"][1]["batching"]["planner"] = "greedy";
  CHECK(parse(doc).variants[1].batching.planner == planner_kind::greedy);
  doc["variants"][1]["batching"]["planner"] = "cost";
  CHECK(parse(doc).variants[1].batching.planner == planner_kind::cost);
  CHECK(to_string(planner_kind::greedy) == "greedy");

  doc["variants"][1]["batching"]["planner"] = "optimal";
  auto ps = problems_of(doc);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == "variants[1].batching.planner");
  CHECK_THAT(ps[0].message, Catch::Contains("greedy") && Catch::Contains("cost"));

  doc = base();
  // Static batches are not planned: the key belongs to dynamic blocks only.
  doc["variants"][0]["batching"] = {{"kind", "static"}, {"planner", "greedy"}};
  ps = problems_of(doc);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == "variants[0].batching.planner");
}

TEST_CASE("a token budget smaller than a sample is refused before anything runs", "[config]") {
  auto doc = base();
  doc["variants"][1]["batching"]["max_tokens"] = 20;
  const config c = parse(doc);
  const dataset data = make_dataset(c.workload, c.model);
  try {
    check_config_against_workload(c, data);
    FAIL("expected an input_error");
  } catch (const input_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "variants[1].batching.max_tokens");
    CHECK_THAT(e.problems()[0].message, Catch::Contains("20 is smaller than sample") && Catch::Contains("length"));
  }
}

TEST_CASE("the server scenario block", "[config]") {
  auto doc = base();
  doc["scenario"] = "server";
  doc["server"] = {{"rates", {200, 50}}, {"latency_bound_ms", 100}, {"requests", 300}};
  const config c = parse(doc);
  CHECK(c.scenario == "server");
  CHECK(c.server.rates == std::vector<double>{50, 200});  // sorted: the sweep climbs
  CHECK(c.server.requests == 300);
  CHECK(c.server.latency_bound_ms == 100);

  doc["server"] = {{"rates", {0}}, {"latency_bound_ms", 100}};
  doc["variants"][1]["batching"]["max_queue_delay_ms"] = -1;
  auto ps = problems_of(doc);
  REQUIRE(ps.size() == 2);
  CHECK(ps[0].path == "server.rates[0]");
  CHECK(ps[1].path == "variants[1].batching.max_queue_delay_ms");

  doc = base();
  doc["server"] = {{"rates", {1}}};
  ps = problems_of(doc);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == "server");  // a server block without the server scenario
  doc["scenario"] = "server";
  doc["server"] = {{"rates", {1}}};
  ps = problems_of(doc);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == "server.latency_bound_ms");
}

TEST_CASE("a bad trace is refused with its line before anything runs", "[config]") {
  const auto dir = std::filesystem::temp_directory_path() / ("attnbench_cfgtrace_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "trace.txt") << "0.0 0\n0.1 99\n";
  auto doc = base();
  doc["scenario"] = "server";
  doc["server"] = {{"trace", (dir / "trace.txt").string()}, {"latency_bound_ms", 50}};
  const config c = parse(doc);
  const dataset data = make_dataset(c.workload, c.model);
  try {
    check_config_against_workload(c, data);
    FAIL("expected an input_error");
  } catch (const input_error& e) {
    CHECK(e.problems()[0].path == "server.trace");
    CHECK_THAT(e.problems()[0].message, Catch::Contains("trace.txt:2") && Catch::Contains("sample 99"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("duplicate_fraction repeats earlier samples", "[config]") {
  auto doc = base();
  doc["workload"]["samples"] = 200;
  doc["workload"]["duplicate_fraction"] = 0.25;
  const config c = parse(doc);
  const dataset data = make_dataset(c.workload, c.model);
  int64_t repeats = 0;
  for (std::size_t i = 1; i < data.samples.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (data.samples[j] == data.samples[i]) {
        ++repeats;
        break;
      }
  CHECK(repeats == Approx(50).margin(20));
  doc["workload"]["duplicate_fraction"] = 1.0;
  REQUIRE(problems_of(doc).size() == 1);
  CHECK(problems_of(doc)[0].path == "workload.duplicate_fraction");
}
