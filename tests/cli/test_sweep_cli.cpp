// `attnbench run` on a config with a sweep block, and `compare` on its results: the real binary.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

namespace fs = std::filesystem;
using namespace attnbench;
using testing::read_file;
using testing::run_cli;

namespace {

nlohmann::json sweep_config(const fs::path& out) {
  auto cfg = nlohmann::json::parse(R"({
    "name": "cli-sweep",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 8, "lengths": {"kind": "fixed", "length": 16}, "max_length": 32},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "naive", "attention": "naive", "batching": {"batch_size": 4}},
      {"name": "sdpa", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}}
    ],
    "baseline": "naive",
    "sweep": {"axes": {"batch_size": [2, 8], "length": "8,16"}}
  })");
  cfg["output"] = {{"dir", out.string()}};
  return cfg;
}

}  // namespace

TEST_CASE("run on a sweep writes the combined reports and the chart, compare pairs points", "[cli][sweep]") {
  testing::temp_dir tmp("cli", "sweep");
  const auto out = tmp.path / "out";
  const auto cfg = tmp.path / "sweep.json";
  std::ofstream(cfg) << sweep_config(out).dump(2);

  auto v = run_cli("validate " + cfg.string());
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.output, Catch::Contains("sweep of 4 points"));

  auto r =
      run_cli("run " + cfg.string() + " --quiet --save-outputs --junit " + (tmp.path / "junit.xml").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("### batch_size=8 length=16"));
  const std::string csv = read_file(out / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 4 * 2);
  CHECK_THAT(read_file(out / "report.md"), Catch::Contains("| batch_size | length | Method |"));
  CHECK_THAT(read_file(out / "sweep.svg"), Catch::Contains("<g class=\"series\">"));
  CHECK(fs::exists(out / "outputs" / "batch_size_2_length_8" / "sdpa.npy"));
  CHECK_THAT(read_file(tmp.path / "junit.xml"), Catch::Contains("sdpa [batch_size=2 length=16]"));

  // The same file twice: every point's variants pair up and nothing regressed.
  auto c = run_cli("compare " + (out / "results.json").string() + " " + (out / "results.json").string());
  INFO(c.output);
  CHECK(c.exit_code == 0);
  CHECK_THAT(c.output, Catch::Contains("sdpa [batch_size=8 length=8]"));

  // Reports are never overwritten by accident, and nothing is run when they would be.
  auto again = run_cli("run " + cfg.string() + " --quiet");
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("exists from an earlier run"));

  // A bad point is a config error before anything runs.
  auto bad = sweep_config(tmp.path / "bad");
  bad["sweep"]["axes"]["length"] = "8,64";
  std::ofstream(tmp.path / "bad.json") << bad.dump(2);
  auto b = run_cli("run " + (tmp.path / "bad.json").string() + " --quiet");
  CHECK(b.exit_code == 2);
  CHECK_THAT(b.output, Catch::Contains("workload.lengths.length: must be <= workload.max_length (32); got 64 "
                                       "(at sweep point batch_size=2 length=64)"));
  CHECK(!fs::exists(tmp.path / "bad"));
}
