#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "common/error.hpp"
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
