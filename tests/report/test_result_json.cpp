#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "report/result.hpp"
#include "report/result_json.hpp"
#include "sample_result.hpp"

using namespace attnbench;
using ojson = nlohmann::ordered_json;

TEST_CASE("results.json round trip", "[report]") {
  const ojson written = run_result_to_json(testing::sample_result());
  const std::string text = written.dump();

  SECTION("ordered_json keeps every value and key order") {
    const run_result back = run_result_from_json(ojson::parse(text));
    CHECK(run_result_to_json(back).dump() == text);
    CHECK(std::isnan(back.variants[2].throughput.median));
    CHECK(back.variants[2].peak_memory_bytes == -1);
    CHECK(back.variants[1].throughput.samples == testing::sample_result().variants[1].throughput.samples);
  }
  SECTION("nlohmann::json reads the same record") {
    const run_result back = run_result_from_json(nlohmann::json::parse(text));
    CHECK(run_result_to_json(back)["variants"] == written["variants"]);
    CHECK(back.environment.config["model"]["preset"] == "mini");
  }
}

TEST_CASE("results.json writes NaN as null", "[report]") {
  const ojson j = run_result_to_json(testing::sample_result());
  const ojson& skipped = j["variants"][2];
  CHECK(skipped["throughput"]["median"].is_null());
  CHECK(skipped["speedup"]["ci_low"].is_null());
  CHECK(skipped["peak_memory_bytes"].is_null());
  CHECK(skipped["status"] == "SKIPPED");
  CHECK(j["variants"][0]["throughput"]["median"] == 41.33);
  CHECK(j.dump().find("NaN") == std::string::npos);
}

TEST_CASE("results.json errors name the field", "[report]") {
  ojson j = run_result_to_json(testing::sample_result());
  SECTION("schema version") {
    j["schema_version"] = results_schema_version + 1;
    CHECK_THROWS_WITH(run_result_from_json(j),
                      Catch::StartsWith("schema_version: ") && Catch::Contains("not supported"));
  }
  SECTION("missing nested field") {
    j["variants"][1]["throughput"].erase("median");
    CHECK_THROWS_WITH(run_result_from_json(j), "variants[1].throughput.median: missing field");
  }
  SECTION("wrong type") {
    j["environment"]["ceilings"][0]["size"] = "big";
    CHECK_THROWS_WITH(run_result_from_json(j), "environment.ceilings[0].size: expected an integer");
  }
  SECTION("unknown status") {
    j["variants"][0]["check"]["status"] = "OK";
    CHECK_THROWS_AS(run_result_from_json(j), input_error);
  }
  SECTION("not an object") { CHECK_THROWS_AS(run_result_from_json(ojson::array()), input_error); }
}

TEST_CASE("results.json: padding, batching, cache and server fields", "[report]") {
  const run_result r = testing::server_sample_result();
  const ojson j = run_result_to_json(r);
  CHECK(j["scenario"] == "server");
  CHECK(j["latency_bound_ms"] == 250.0);
  const ojson& fast = j["variants"][1];
  CHECK(fast["padding_efficiency"] == 35112.0 / 48640);
  CHECK(fast["mean_batch_size"] == 8.0);
  CHECK(fast["cache_hit_rate"] == 0.25);
  CHECK(fast["allocations_per_batch"] == 0.0);
  CHECK(fast["max_sustainable_rate"] == 100.0);
  REQUIRE(fast["server"].size() == 4);
  CHECK(fast["server"][0]["p999_ms"] == 180.3);
  CHECK(fast["server"][2]["within_bound"] == false);
  CHECK(fast["server"][3]["offered_rate"].is_null());  // trace replay: NaN → null
  CHECK(j["variants"][0]["server"] == ojson::array());
  CHECK(j["variants"][0]["cache_hit_rate"].is_null());

  const run_result back = run_result_from_json(ojson::parse(j.dump()));
  CHECK(run_result_to_json(back).dump() == j.dump());
  CHECK(back.scenario == "server");
  REQUIRE(back.variants[1].server.size() == 4);
  CHECK(std::isnan(back.variants[1].server[3].offered_rate));
  CHECK(back.variants[1].server[1].requests == 2000);
}

TEST_CASE("results.json written before the new fields still loads", "[report]") {
  ojson j = run_result_to_json(testing::sample_result());
  j.erase("scenario");
  j.erase("latency_bound_ms");
  for (auto& v : j["variants"])
    for (const char* key : {"padding_efficiency", "mean_batch_size", "allocations_per_batch",
                            "cache_hit_rate", "server", "max_sustainable_rate"})
      v.erase(key);
  const run_result back = run_result_from_json(j);
  CHECK(back.scenario == "offline");
  CHECK(std::isnan(back.latency_bound_ms));
  CHECK(std::isnan(back.variants[0].padding_efficiency));
  CHECK(back.variants[1].server.empty());
  CHECK(std::isnan(back.variants[1].max_sustainable_rate));
  // Present but mistyped is still an error.
  j["variants"][1]["server"] = ojson::array({{{"offered_rate", 1}}});
  CHECK_THROWS_WITH(run_result_from_json(j), "variants[1].server[0].achieved_rate: missing field");
  j["variants"][1]["server"] = 3;
  CHECK_THROWS_WITH(run_result_from_json(j), "variants[1].server: expected an array");
}

TEST_CASE("load_run_result names the file in every error", "[report]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("attnbench_load_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string good = write("good.json", run_result_to_json(testing::sample_result()).dump(2));
  CHECK(load_run_result(good).variants.size() == 3);

  CHECK_THROWS_WITH(load_run_result(dir / "missing.json"),
                    (dir / "missing.json").string() + ": cannot read: No such file or directory");
  CHECK_THROWS_WITH(load_run_result(dir), dir.string() + ": cannot read: is a directory");
  const std::string corrupt = write("corrupt.json", "{\"schema_version\": 1,\n  \"name\": ");
  CHECK_THROWS_WITH(load_run_result(corrupt),
                    Catch::StartsWith(corrupt + ": invalid JSON: parse error at line 2") &&
                        !Catch::Contains("json.exception"));
  ojson j = run_result_to_json(testing::sample_result());
  j["schema_version"] = 3;
  const std::string future = write("future.json", j.dump());
  CHECK_THROWS_WITH(load_run_result(future),
                    future + ": schema_version: results schema version 3 is not supported (expected 1 to 2)");
  j["schema_version"] = 2;
  j["variants"][0].erase("name");
  const std::string missing = write("missing-field.json", j.dump());
  CHECK_THROWS_WITH(load_run_result(missing), missing + ": variants[0].name: missing field");
  std::filesystem::remove_all(dir);
}
