#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "report/comparison.hpp"
#include "report/comparison_json.hpp"
#include "sample_result.hpp"

using namespace attnbench;

TEST_CASE("compare.json: the record, keys in order, NaN as null", "[report]") {
  const run_result base = testing::sample_result();
  const run_result slow =
      testing::with_throughput(base, 1, testing::scaled(base.variants[1].throughput.samples, 0.8));
  const nlohmann::ordered_json j = comparison_to_json(compare_runs(base, slow, {}, "a.json", "b.json"));
  CHECK(j.dump().rfind(R"({"schema_version":3,"base":{"path":"a.json","name":"cpu-small",)", 0) == 0);
  CHECK(j["new"]["path"] == "b.json");
  CHECK(j["threshold"] == 0.15);
  CHECK(j["alpha"] == 0.05);
  CHECK(j["normalize"] == "none");
  CHECK(j["warnings"] == nlohmann::ordered_json::array());
  CHECK(j["regression"] == true);
  CHECK(j["summary"]["slower"] == 1);
  CHECK(j["summary"]["same"] == 1);
  CHECK(j["summary"]["skipped"] == 1);
  CHECK(j["summary"]["regressions"] == 1);
  REQUIRE(j["variants"].size() == 3);
  const auto& v = j["variants"][1];
  CHECK(v["name"] == "bf16-sdpa");
  CHECK(v["pairing"] == "compared");
  CHECK(v["verdict"] == "SLOWER");
  CHECK(v["geomean_change"].get<double>() == Approx(-0.2));
  CHECK(v["geomean_change_ci_low"].get<double>() < -0.2);
  CHECK(v["geomean_change_ci_high"].get<double>() > -0.2);
  CHECK_FALSE(v.contains("change"));  // version 1's change of medians
  CHECK(v["p_value"].get<double>() == Approx(2.0 / 252));
  CHECK(v["method"] == "exact");
  CHECK(v["base"]["geomean"].get<double>() == Approx(std::pow(97.8 * 99.1 * 96.5 * 98.7 * 98.2, 1.0 / 5)));
  CHECK(v["base"]["geomean_ci_low"].get<double>() < v["base"]["geomean"].get<double>());
  CHECK_FALSE(v["base"].contains("median"));
  CHECK(v["new"]["n"] == 5);
  CHECK(v["base"]["compute_dtype"] == "bf16");
  CHECK(v["base"]["ceiling_gflops"].is_null());  // not normalised
  CHECK(v["regression"] == true);
  const auto& skipped = j["variants"][2];
  CHECK(skipped["verdict"].is_null());
  CHECK(skipped["geomean_change"].is_null());
  CHECK(skipped["method"].is_null());
  CHECK(skipped["base"]["geomean"].is_null());
  CHECK(j.dump().find("NaN") == std::string::npos);
}
