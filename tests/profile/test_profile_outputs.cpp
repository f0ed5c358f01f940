// Where profile outputs go, and what stops them from being written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "cli/cli_support.hpp"
#include "profile/profile_outputs.hpp"

namespace fs = std::filesystem;
using namespace attnbench;

TEST_CASE("profile outputs: names and layout", "[profile]") {
  CHECK(safe_file_name("AMP + CPU Offloading") == "AMP___CPU_Offloading");
  CHECK(variant_profile_dir("out", "a/b") == fs::path("out") / "a_b");
  CHECK(tensorboard_run_dir("out", "sdpa") == fs::path("out") / "tensorboard" / "sdpa");
  const std::string trace = tensorboard_trace_name("host_42", 1700000000123);
  CHECK(trace == "host_42.1700000000123.pt.trace.json");
  // torch-tb-profiler's worker pattern (consts.WORKER_PATTERN): worker, optional .span, suffix.
  std::smatch m;
  REQUIRE(std::regex_match(trace, m, std::regex(R"(^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$)")));
  CHECK(m[1] == "host_42");
  CHECK(m[2] == ".1700000000123");
  const auto files = profile_output_files("out", {"naive", "sdpa"});
  CHECK(files.size() == 3 + 2 * 3);
  CHECK(std::count(files.begin(), files.end(), fs::path("out") / "sdpa" / "trace.json") == 1);
}

TEST_CASE("profile outputs: earlier files and traces are refused without force", "[profile]") {
  testing::temp_dir tmp("profile", "outputs");
  const fs::path dir = tmp.path / "p";
  CHECK(profile_output_problems(dir, {"naive"}, false, "output.dir", "--out").empty());
  fs::create_directories(tensorboard_run_dir(dir, "naive"));
  std::ofstream(tensorboard_run_dir(dir, "naive") / tensorboard_trace_name("h_1", 5)) << "{}";
  auto problems = profile_output_problems(dir, {"naive"}, false, "output.dir", "--out");
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0].message, Catch::Contains("holds traces of an earlier profile"));
  std::ofstream(dir / "breakdown.md") << "x";
  CHECK(profile_output_problems(dir, {"naive"}, false, "output.dir", "--out").size() == 2);
  CHECK(profile_output_problems(dir, {"naive"}, true, "output.dir", "--out").empty());
}
