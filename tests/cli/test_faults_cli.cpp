// Faults end to end (issue 19), on the real binary: an out-of-memory variant is a row and exit 6,
// a config this machine cannot run is refused by validate (never a raw std::bad_alloc), and a disk
// that fills while the reports are written leaves none of them.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/cli_support.hpp"

namespace fs = std::filesystem;
using namespace attnbench;
using testing::read_file;
using testing::run_cli;
using testing::write_config;

namespace {

struct temp_dir : testing::temp_dir {
  explicit temp_dir(const std::string& tag) : testing::temp_dir("faults", tag) {}
};

// "huge" materialises 64 × 2 heads × 256² fp32 scores (32 MiB, twice) in one batch: over the
// 16 MiB cap, while the baseline's batches of 4 stay well under it.
nlohmann::json capped_config(const fs::path& out) {
  auto cfg = nlohmann::json::parse(R"({
    "name": "oom-test",
    "model": {"preset": "bert-tiny"},
    "workload": {"samples": 64, "lengths": {"kind": "fixed", "length": 256}, "max_length": 256},
    "measure": {"warmup": 0, "repetitions": 2, "max_memory_bytes": "16MiB"},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "base", "attention": "sdpa", "batching": {"batch_size": 4}},
      {"name": "huge", "attention": "naive", "batching": {"batch_size": 64}},
      {"name": "after", "attention": "naive", "batching": {"batch_size": 4}}
    ],
    "baseline": "base"
  })");
  cfg["output"] = {{"dir", out.string()}, {"formats", {"json", "md"}}};
  return cfg;
}

}  // namespace

TEST_CASE("run: a variant over measure.max_memory_bytes is an OOM row, the others are measured, exit 6",
          "[cli][faults]") {
  temp_dir tmp("oom");
  const auto out = tmp.path / "out";
  const auto r = run_cli("run " + write_config(tmp.path, capped_config(out)).string() + " --quiet");
  INFO(r.output);
  CHECK(r.exit_code == 6);
  CHECK_THAT(r.output, Catch::Contains("OOM huge: could not run: CPU out of memory under measure.max_memory_bytes"));
  const auto results = nlohmann::json::parse(read_file(out / "results.json"));
  CHECK(results["complete"] == true);
  CHECK(results["variants"][0]["status"] == "PASS");
  CHECK(results["variants"][1]["status"] == "OOM");
  CHECK_THAT(results["variants"][1]["reason"].get<std::string>(), Catch::Contains("tried to allocate"));
  CHECK(results["variants"][2]["status"] == "PASS");
  CHECK_THAT(read_file(out / "report.md"), Catch::Contains("huge (OOM)"));
}

TEST_CASE("validate: a workload this machine cannot hold is refused with the estimate, exit 2", "[cli][faults]") {
  temp_dir tmp("cost");
  auto cfg = capped_config(tmp.path / "out");
  cfg["workload"]["samples"] = int64_t{1} << 40;
  const auto path = write_config(tmp.path, cfg);
  const auto r = run_cli("validate " + path.string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("error: workload: needs at least"));
  CHECK_THAT(r.output, Catch::Contains("--no-cost-check"));
  CHECK_THAT(r.output, !Catch::Contains("bad_alloc"));
  const auto run = run_cli("run " + path.string());
  CHECK(run.exit_code == 2);
  CHECK_FALSE(fs::exists(tmp.path / "out"));
}

TEST_CASE("run: a disk that fills while the reports are written leaves none of them, exit 2", "[cli][faults]") {
  temp_dir tmp("enospc");
  const auto out = tmp.path / "out";
  auto cfg = capped_config(out);
  cfg["variants"].erase(1);  // no OOM row: only the write fails
  const auto r = run_cli("run " + write_config(tmp.path, cfg).string() + " --quiet",
                         "ATTNBENCH_TEST_WRITE_FAULT=ENOSPC:report.md");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("report.md: No space left on device"));
  CHECK_FALSE(fs::exists(out / "results.json"));
  CHECK_FALSE(fs::exists(out / "report.md"));
  if (fs::exists(out))
    for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}
