// `attnbench compare` end to end: the real binary on results.json files written here, real exit
// codes; and `run --junit` feeding it.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

#include "report/result_json.hpp"
#include "report/sample_result.hpp"
#include "report/xml_check.hpp"

namespace fs = std::filesystem;
using namespace attnbench;

namespace {

using testing::command_result;
using testing::read_file;
using testing::run_cli;
using testing::run_cli_with_test_hooks;

// A scratch directory named after this file's tests.
struct temp_dir : testing::temp_dir {
  explicit temp_dir(const std::string& tag) : testing::temp_dir("compare", tag) {}
};

std::string write_results(const fs::path& dir, const std::string& name, const run_result& r) {
  const fs::path p = dir / name;
  std::ofstream(p) << run_result_to_json(r).dump(2);
  return p.string();
}

}  // namespace

TEST_CASE("compare: identical runs exit 0 with a SAME table on stdout", "[cli]") {
  temp_dir tmp("same");
  const run_result r = testing::sample_result();
  const auto a = write_results(tmp.path, "a.json", r), b = write_results(tmp.path, "b.json", r);
  const auto out = run_cli("compare " + a + " " + b);
  INFO(out.output);
  CHECK(out.exit_code == 0);
  CHECK_THAT(out.output, Catch::Contains("**Result: no regression.** 2 compared: 2 SAME"));
  CHECK_THAT(
      out.output,
      Catch::Contains(
          "| bf16-sdpa | 98.06 [96.82–99.31] (n=5) | 98.06 [96.82–99.31] (n=5) | +0.0% [-1.5%, +1.5%] |"));
}

TEST_CASE("compare: 20% slower exits 1 and writes compare.json, compare.md and JUnit", "[cli]") {
  temp_dir tmp("slower");
  const run_result base = testing::sample_result();
  const auto a = write_results(tmp.path, "base.json", base);
  const auto b = write_results(
      tmp.path, "new.json",
      testing::with_throughput(base, 1, testing::scaled(base.variants[1].throughput.samples, 0.8)));
  const fs::path out = tmp.path / "cmp", junit = tmp.path / "reports" / "compare.xml";
  const std::string args = "compare " + a + " " + b + " --out " + out.string() + " --junit " + junit.string();
  const auto r = run_cli(args);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("**Result: REGRESSION.** 1 SLOWER by more than 15%: bf16-sdpa."));
  const auto j = nlohmann::json::parse(read_file(out / "compare.json"));
  CHECK(j["regression"] == true);
  CHECK(j["variants"][1]["verdict"] == "SLOWER");
  CHECK(read_file(out / "compare.md") == r.output);  // stdout is the markdown, nothing else
  const std::string xml = read_file(junit);
  CHECK(testing::xml_problem(xml).empty());
  CHECK_THAT(xml, Catch::Contains("failures=\"1\"") && Catch::Contains("SLOWER: throughput -20.0%"));

  // Written files are never overwritten without --force, and nothing is half-written.
  const auto again = run_cli(args);
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("compare.json exists from an earlier run; pass --force"));
  CHECK_THAT(again.output, Catch::Contains("compare.xml exists from an earlier run; pass --force"));
  CHECK(run_cli(args + " --force").exit_code == 1);
  for (const auto& e : fs::recursive_directory_iterator(tmp.path))
    CHECK(e.path().string().find(".tmp-") == std::string::npos);

  // A 30% threshold makes the 20% drop SAME.
  CHECK(run_cli("compare " + a + " " + b + " --threshold 30%").exit_code == 0);
  CHECK(run_cli("compare " + a + " " + b + " --threshold 0.3").exit_code == 0);
}

TEST_CASE("compare: version-1 and version-2 results.json against the current version", "[cli]") {
  temp_dir tmp("v1");
  // The report tests' sample run as schema versions 1 and 2 wrote it, and the same run written now.
  const std::string v1 = std::string(ATTNBENCH_TEST_DATA_DIR) + "/report/golden/results-v1.json";
  const std::string previous = std::string(ATTNBENCH_TEST_DATA_DIR) + "/report/golden/results-v2.json";
  const auto v2 = write_results(tmp.path, "v2.json", testing::sample_result());
  CHECK(run_cli("compare " + previous + " " + v2).exit_code == 0);
  const auto out = run_cli("compare " + v1 + " " + v2);
  INFO(out.output);
  CHECK(out.exit_code == 0);
  CHECK_THAT(out.output, Catch::Contains("**Result: no regression.** 2 compared: 2 SAME"));
  CHECK_THAT(out.output, Catch::Contains("| +0.0% ["));
  // And the other way round, and a slower version-2 run against the version-1 baseline.
  CHECK(run_cli("compare " + v2 + " " + v1).exit_code == 0);
  const run_result base = testing::sample_result();
  const auto slow = write_results(
      tmp.path, "slow.json",
      testing::with_throughput(base, 1, testing::scaled(base.variants[1].throughput.samples, 0.8)));
  CHECK(run_cli("compare " + v1 + " " + slow).exit_code == 1);
  // The committed CI baseline (version 1) still loads for the regression gate.
  const std::string ci = std::string(ATTNBENCH_SOURCE_DIR) + "/results/ci-baseline/results.json";
  CHECK(run_cli("compare " + ci + " " + ci).exit_code == 0);
}

TEST_CASE("compare: a newly failing check exits 1", "[cli]") {
  temp_dir tmp("check");
  const run_result base = testing::sample_result();
  run_result broken = base;
  broken.variants[1].status = status_kind::fail;
  broken.variants[1].check.status = status_kind::fail;
  const auto r = run_cli("compare " + write_results(tmp.path, "a.json", base) + " " +
                         write_results(tmp.path, "b.json", broken));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("1 newly failing the output check: bf16-sdpa."));
}

TEST_CASE("compare: bad input exits 2 naming the file", "[cli]") {
  temp_dir tmp("bad");
  const run_result r = testing::sample_result();
  const auto good = write_results(tmp.path, "good.json", r);

  const fs::path corrupt = tmp.path / "corrupt.json";
  std::ofstream(corrupt) << "{\"schema_version\": 1, \"name\": ";
  auto out = run_cli("compare " + good + " " + corrupt.string());
  CHECK(out.exit_code == 2);
  CHECK_THAT(out.output,
             Catch::Contains("error: " + corrupt.string() + ": invalid JSON: parse error at line 1"));

  auto future = run_result_to_json(r);
  future["schema_version"] = 4;
  const fs::path newer = tmp.path / "newer.json";
  std::ofstream(newer) << future.dump();
  out = run_cli("compare " + newer.string() + " " + good);
  CHECK(out.exit_code == 2);
  CHECK_THAT(out.output, Catch::Contains("error: " + newer.string() +
                                         ": schema_version: results schema version 4 is "
                                         "not supported (expected 1 to 3)"));

  auto incomplete = run_result_to_json(r);
  incomplete["variants"][1]["throughput"].erase("samples");
  const fs::path missing = tmp.path / "missing-field.json";
  std::ofstream(missing) << incomplete.dump();
  out = run_cli("compare " + good + " " + missing.string());
  CHECK(out.exit_code == 2);
  CHECK_THAT(out.output,
             Catch::Contains(missing.string() + ": variants[1].throughput.samples: missing field"));

  CHECK(run_cli("compare " + good + " " + (tmp.path / "nope.json").string()).exit_code == 2);
  out = run_cli("compare " + good + " " + good + " --threshold 5");
  CHECK(out.exit_code == 2);
  CHECK_THAT(out.output, Catch::Contains("--threshold: 5 as a fraction is more than 100%; did you mean 5%?"));
  CHECK(run_cli("compare " + good + " " + good + " --threshold fast").exit_code == 2);
  CHECK(run_cli("compare " + good + " " + good + " --alpha 0").exit_code == 2);
  CHECK_FALSE(fs::exists(tmp.path / "cmp"));
}

TEST_CASE("compare: a different machine warns, or exits 2 with --strict", "[cli]") {
  temp_dir tmp("strict");
  const run_result r = testing::sample_result();
  run_result other = r;
  other.environment.device_name = "NVIDIA H200";
  const auto a = write_results(tmp.path, "a.json", r), b = write_results(tmp.path, "b.json", other);
  auto out = run_cli("compare " + a + " " + b);
  CHECK(out.exit_code == 0);
  CHECK_THAT(out.output, Catch::Contains("> **Warning:** environment.device_name differs"));
  out = run_cli("compare " + a + " " + b + " --strict --out " + (tmp.path / "cmp").string());
  CHECK(out.exit_code == 2);
  CHECK_THAT(out.output,
             Catch::Contains("error: --strict: environment.device_name differs: BASE \"AMD EPYC 7B13\", "
                             "NEW \"NVIDIA H200\""));
  CHECK_FALSE(fs::exists(tmp.path / "cmp"));
  CHECK(run_cli("compare " + a + " " + a + " --strict").exit_code == 0);
}

TEST_CASE("compare --normalize ceiling: a half-speed runner exits 0, a run without ceilings exits 2", "[cli]") {
  temp_dir tmp("normalize");
  const run_result base = testing::sample_result();
  run_result slow_runner = base;
  for (auto& c : slow_runner.environment.ceilings) c.gflops /= 2;
  for (std::size_t i = 0; i < 2; ++i)
    slow_runner = testing::with_throughput(slow_runner, i, testing::scaled(base.variants[i].throughput.samples, 0.5));
  const auto a = write_results(tmp.path, "base.json", base), b = write_results(tmp.path, "slow.json", slow_runner);
  CHECK(run_cli("compare " + a + " " + b).exit_code == 1);  // raw: every variant SLOWER
  auto out = run_cli("compare " + a + " " + b + " --normalize ceiling --out " + (tmp.path / "cmp").string());
  INFO(out.output);
  CHECK(out.exit_code == 0);
  CHECK_THAT(out.output, Catch::Contains("Normalised (`--normalize ceiling`)"));
  CHECK_THAT(out.output, Catch::Contains("| Variant | BASE (samples/s per GFLOP/s) |"));
  CHECK_THAT(out.output, Catch::Contains("÷ bf16 1311"));
  const auto json = nlohmann::json::parse(read_file(tmp.path / "cmp" / "compare.json"));
  CHECK(json["normalize"] == "ceiling");
  CHECK(json["variants"][1]["new"]["ceiling_gflops"].get<double>() == Approx(655.35));

  run_result unmeasured = base;
  unmeasured.environment.ceilings.clear();
  const auto c = write_results(tmp.path, "unmeasured.json", unmeasured);
  out = run_cli("compare " + a + " " + c + " --normalize ceiling");
  CHECK(out.exit_code == 2);
  CHECK_THAT(out.output, Catch::Contains("--normalize: NEW (" + c + ") has no measured matmul ceilings"));
  CHECK(run_cli("compare " + a + " " + a + " --normalize median").exit_code == 2);
}

TEST_CASE("run --junit, then compare the run with itself", "[cli]") {
  temp_dir tmp("flow");
  auto cfg = nlohmann::json::parse(R"({
    "name": "junit-test",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 8, "lengths": {"kind": "fixed", "length": 16}},
    "measure": {"warmup": 0, "repetitions": 4},
    "device": "cpu",
    "variants": [
      {"name": "baseline", "precision": "fp32", "attention": "naive"},
      {"name": "sdpa", "attention": "sdpa"},
      {"name": "later", "pending": "not yet"}
    ],
    "baseline": "baseline"
  })");
  cfg["output"] = {{"dir", (tmp.path / "run").string()}};
  std::ofstream(tmp.path / "config.json") << cfg.dump(2);
  const fs::path junit = tmp.path / "run-junit.xml";
  auto run = run_cli_with_test_hooks("run " + (tmp.path / "config.json").string() + " --quiet --junit " + junit.string() +
                     " --test-perturb-outputs sdpa");
  INFO(run.output);
  REQUIRE(run.exit_code == 3);  // the perturbed variant FAILs; the JUnit report says so
  const std::string xml = read_file(junit);
  CHECK(testing::xml_problem(xml).empty());
  CHECK_THAT(xml,
             Catch::Contains(
                 "<testsuite name=\"junit-test\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  CHECK_THAT(xml, Catch::Contains("<testcase classname=\"junit-test\" name=\"baseline\""));
  CHECK_THAT(xml, Catch::Contains("name=\"sdpa\"") && Catch::Contains("<failure message="));
  CHECK_THAT(xml, Catch::Contains("<skipped message=\"not yet\"/>"));
  CHECK(fs::exists(tmp.path / "run" / "throughput.svg"));
  CHECK_THAT(read_file(tmp.path / "run" / "report.md"), Catch::Contains("](throughput.svg)"));

  // The JUnit file is an output like the others: replaced only with --force.
  auto refused = run_cli("run " + (tmp.path / "config.json").string() + " --quiet --junit " + junit.string());
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Catch::Contains("--junit: " + junit.string() + " exists from an earlier run"));
  auto again =
      run_cli("run " + (tmp.path / "config.json").string() + " --quiet --force --junit " + junit.string());
  CHECK(again.exit_code == 0);
  CHECK_THAT(read_file(junit), Catch::Contains("failures=\"0\""));

  const std::string results = (tmp.path / "run" / "results.json").string();
  auto cmp = run_cli("compare " + results + " " + results);
  INFO(cmp.output);
  CHECK(cmp.exit_code == 0);
  CHECK_THAT(cmp.output, Catch::Contains("| baseline | "));
  CHECK_THAT(cmp.output, Catch::Contains("| later | n/a | n/a | — | — | skipped |"));
}
