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
  CHECK(skipped["throughput"]["geomean"].is_null());
  CHECK(skipped["speedup"]["geomean_ci_low"].is_null());
  CHECK(skipped["speedup"]["method"].is_null());
  CHECK(skipped["check"]["output"].is_null());  // not compared
  CHECK(skipped["peak_memory_bytes"].is_null());
  CHECK(skipped["status"] == "SKIPPED");
  CHECK(j["variants"][0]["throughput"]["median"] == 41.33);
  CHECK(j["variants"][1]["speedup"]["method"] == "paired");
  CHECK(j["variants"][1]["check"]["output"] == "logits");
  CHECK(j.dump().find("NaN") == std::string::npos);
}

TEST_CASE("results.json v2: the geometric mean, its interval and the speedup's are one statistic",
          "[report]") {
  const ojson j = run_result_to_json(testing::sample_result());
  CHECK(j["schema_version"] == results_schema_version);
  const ojson& fast = j["variants"][1];
  const double base_geomean = j["variants"][0]["throughput"]["geomean"].get<double>();
  const double fast_geomean = fast["throughput"]["geomean"].get<double>();
  CHECK(fast_geomean == Approx(std::pow(97.8 * 99.1 * 96.5 * 98.7 * 98.2, 1.0 / 5)));
  CHECK(fast["throughput"]["geomean_ci_low"].get<double>() < fast_geomean);
  CHECK(fast["throughput"]["geomean_ci_high"].get<double>() > fast_geomean);
  CHECK(fast["speedup"]["geomean"].get<double>() == Approx(fast_geomean / base_geomean).epsilon(1e-12));
  // No field keeps a version-1 name with a new meaning.
  for (const char* gone : {"ci_low", "ci_high"}) CHECK_FALSE(fast["throughput"].contains(gone));
  for (const char* gone : {"median", "ci_low", "ci_high"}) CHECK_FALSE(fast["speedup"].contains(gone));
}

TEST_CASE("a version-1 results.json loads with its statistics recomputed from the samples", "[report]") {
  // tests/report/golden/results-v1.json: the report tests' sample run as schema version 1 wrote it
  // (median ± the mean's t interval, a bootstrap ratio of medians), kept frozen for this test.
  const run_result v1 =
      load_run_result(std::string(ATTNBENCH_TEST_DATA_DIR) + "/report/golden/results-v1.json");
  const run_result now = testing::sample_result();
  REQUIRE(v1.variants.size() == 3);
  for (size_t i = 0; i < 2; ++i) {
    const variant_result &a = v1.variants[i], &b = now.variants[i];
    CHECK(a.throughput.median == b.throughput.median);  // descriptive fields as written
    CHECK(a.throughput.geomean == Approx(b.throughput.geomean).epsilon(1e-12));
    CHECK(a.throughput.geomean_ci_low == Approx(b.throughput.geomean_ci_low).epsilon(1e-12));
    CHECK(a.throughput.geomean_ci_high == Approx(b.throughput.geomean_ci_high).epsilon(1e-12));
    CHECK(a.speedup.geomean == Approx(b.speedup.geomean).epsilon(1e-12));
    CHECK(a.speedup.geomean_ci_low == Approx(b.speedup.geomean_ci_low).epsilon(1e-12));
    CHECK(a.speedup.method == speedup_method::paired);
    CHECK(a.check.output == output_kind::logits);
    CHECK(std::isnan(a.check.cosine_min));
  }
  // The version-1 speedup was 2.376 [2.355–2.377]: a bootstrap of a median of 5 has few values,
  // and its centre sat at the interval's edge. Recomputed, the centre is inside.
  const speedup_summary& s = v1.variants[1].speedup;
  CHECK(s.geomean > s.geomean_ci_low);
  CHECK(s.geomean < s.geomean_ci_high);
  CHECK(std::isnan(v1.variants[2].speedup.geomean));  // SKIPPED
  // Written back, it is a version-2 file.
  CHECK(run_result_to_json(v1)["schema_version"] == results_schema_version);
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
  j["schema_version"] = 4;
  const std::string future = write("future.json", j.dump());
  CHECK_THROWS_WITH(load_run_result(future),
                    future + ": schema_version: results schema version 4 is not supported (expected 1 to 3)");
  j["schema_version"] = 2;
  j["variants"][0].erase("name");
  const std::string missing = write("missing-field.json", j.dump());
  CHECK_THROWS_WITH(load_run_result(missing), missing + ": variants[0].name: missing field");
  // A number past a double's range (tests/fuzz/corpus/results/number-overflow.json): an input
  // error naming the file, not the JSON library's out_of_range.
  const std::string huge = write("huge.json", "{\"schema_version\": 1e999}");
  CHECK_THROWS_WITH(load_run_result(huge), huge + ": invalid JSON: number overflow parsing '1e999'");
  std::filesystem::remove_all(dir);
}

TEST_CASE("results.json v3: technique metrics round trip, a version-2 file loads without them",
          "[report][metrics]") {
  const ojson j = run_result_to_json(testing::sample_result());
  CHECK(j["schema_version"] == 3);
  const ojson& m = j["variants"][1]["metrics"];
  REQUIRE(m.size() == 2);
  CHECK(m[0].dump() == R"({"name":"resident_weight_bytes","value":22341124.0,"unit":"bytes","direction":"lower",)"
                       R"("source":"test-technique","description":"weights held on the device"})");
  CHECK(m[1]["value"].is_null());
  CHECK(m[1]["note"] == "no copy stream on the CPU");
  CHECK_FALSE(j["variants"][0].contains("metrics"));  // written only when a technique reported one
  const run_result back = run_result_from_json(j);
  REQUIRE(back.variants[1].metrics.size() == 2);
  CHECK(back.variants[1].metrics[0].direction == metric_direction::lower_is_better);
  CHECK(std::isnan(back.variants[1].metrics[1].value));

  // tests/report/golden/results-v2.json: the sample run as schema version 2 wrote it, frozen.
  const run_result v2 = load_run_result(std::string(ATTNBENCH_TEST_DATA_DIR) + "/report/golden/results-v2.json");
  REQUIRE(v2.variants.size() == 3);
  CHECK(v2.variants[1].metrics.empty());
  CHECK(v2.variants[1].speedup.geomean == Approx(testing::sample_result().variants[1].speedup.geomean));

  ojson bad = j;
  bad["variants"][1]["metrics"][0]["direction"] = "up";
  CHECK_THROWS_WITH(run_result_from_json(bad),
                    "variants[1].metrics[0].direction: unknown direction \"up\"; expected higher, lower or neither");
}

TEST_CASE("results.json: the machine's identity and each variant's compute dtype, older files derive it",
          "[report][cpu]") {
  run_result r = testing::sample_result();
  r.environment.cpu_count = 2;
  r.environment.cpu_caches = "L1d 32K, L1i 32K, L2 1024K, L3 32768K";
  r.environment.gpu_capability = "9.0";
  r.environment.gpu_driver = "13.0";
  r.environment.gpu_tensor_core_dtypes = {"fp16", "bf16", "tf32", "fp8"};
  const ojson j = run_result_to_json(r);
  const run_result back = run_result_from_json(j);
  CHECK(back.environment.cpu_count == 2);
  CHECK(back.environment.cpu_caches == r.environment.cpu_caches);
  CHECK(back.environment.gpu_capability == "9.0");
  CHECK(back.environment.gpu_driver == "13.0");
  CHECK(back.environment.gpu_tensor_core_dtypes == r.environment.gpu_tensor_core_dtypes);
  CHECK(back.variants[1].compute_dtype == "bf16");

  // Written before the fields: unknown machine details, the dtype read off the precision label.
  ojson old = j;
  for (const char* k : {"cpu_count", "cpu_caches", "gpu_capability", "gpu_driver", "gpu_tensor_core_dtypes"})
    old["environment"].erase(k);
  for (auto& v : old["variants"]) v.erase("compute_dtype");
  old["variants"][1]["precision"] = "amp (fp32)";
  const run_result older = run_result_from_json(old);
  CHECK(older.environment.cpu_count == 0);
  CHECK(older.environment.gpu_capability.empty());
  CHECK(older.variants[0].compute_dtype == "fp32");
  CHECK(older.variants[1].compute_dtype == "fp32");
  CHECK(older.variants[2].compute_dtype == "fp16");

  CHECK(compute_dtype_of_label("amp-bf16") == "bf16");
  CHECK(compute_dtype_of_label("bf16") == "bf16");
  CHECK(compute_dtype_of_label("fp16") == "fp16");
  CHECK(compute_dtype_of_label("amp (bf16)") == "bf16");
  CHECK(compute_dtype_of_label("amp (") == "");
  CHECK(compute_dtype_of_label("int8").empty());
}

TEST_CASE("results.json: an incomplete run and OOM / TIMEOUT rows round trip", "[report][faults]") {
  run_result r = testing::sample_result();
  r.complete = false;
  r.incomplete_reason = "interrupted by SIGINT after 2 timed rounds";
  r.variants[1].status = status_kind::oom;
  r.variants[1].reason = "could not run: CPU out of memory under measure.max_memory_bytes: tried to allocate 8 bytes";
  r.variants[2].status = status_kind::timeout;
  const ojson j = run_result_to_json(r);
  CHECK(j["complete"] == false);
  CHECK(j["incomplete_reason"] == r.incomplete_reason);
  CHECK(j["variants"][1]["status"] == "OOM");
  CHECK(j["variants"][2]["status"] == "TIMEOUT");
  const run_result back = run_result_from_json(j);
  CHECK_FALSE(back.complete);
  CHECK(back.incomplete_reason == r.incomplete_reason);
  CHECK(back.variants[1].status == status_kind::oom);
  CHECK(back.variants[2].status == status_kind::timeout);
  CHECK(back.any_limit_hit());
  // A file written before: complete.
  ojson old = j;
  old.erase("complete");
  old.erase("incomplete_reason");
  CHECK(run_result_from_json(old).complete);
}

TEST_CASE("results.json: a text workload's tokenizer and its hash round trip, absent without one",
          "[report][bpe]") {
  run_result r = testing::sample_result();
  CHECK_FALSE(run_result_to_json(r)["workload"].contains("tokenizer"));  // token ids: no tokenizer
  CHECK(run_result_from_json(run_result_to_json(r)).workload.tokenizer.empty());
  r.workload.tokenizer = "configs/data/handbook-bpe.json";
  r.workload.tokenizer_fnv1a64 = "ab68ee5b8ba7b2d3";
  const ojson j = run_result_to_json(r);
  CHECK(j["workload"]["tokenizer"] == "configs/data/handbook-bpe.json");
  CHECK(j["workload"]["tokenizer_fnv1a64"] == "ab68ee5b8ba7b2d3");
  const run_result back = run_result_from_json(ojson::parse(j.dump()));
  CHECK(back.workload.tokenizer == "configs/data/handbook-bpe.json");
  CHECK(back.workload.tokenizer_fnv1a64 == "ab68ee5b8ba7b2d3");
}
