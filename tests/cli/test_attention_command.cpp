// `attnbench attention` end to end on a tiny grid, and the inputs it refuses.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli/attention_command.hpp"
#include "cli/cli_support.hpp"

namespace fs = std::filesystem;
using namespace attnbench;

namespace {

struct temp_dir : testing::temp_dir {
  explicit temp_dir(const std::string& tag) : testing::temp_dir("attention", tag) {}
};

testing::command_result run_cli_args(const fs::path& out, const std::string& args) {
  return testing::run_cli("attention --device cpu --out " + out.string() + " " + args);
}

}  // namespace

TEST_CASE("attention: a small grid is validated, timed and written, naive reaches the memory cap", "[cli]") {
  temp_dir tmp("grid");
  const auto out = tmp.path / "out";
  // naive at S=128, B·H = 2 needs 2·2·128²·4 B = 256 KiB: a 200KiB cap makes it OOM there only.
  auto r = run_cli_args(
      out,
      "--batch 1 --heads 2 --seq 32,128 --head-dim 16 --causal false,true "
      "--impl naive,sdpa-flash --warmup 0 --repetitions 2 --memory-cap 200KiB --threads 1 --quiet");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string csv = testing::read_file(out / "attention.csv");
  CHECK_THAT(csv, Catch::Contains("1,2,32,16,false,fp32,naive,ok,"));
  CHECK_THAT(csv, Catch::Contains("1,2,128,16,true,fp32,naive,OOM,"));
  CHECK_THAT(csv, Catch::Contains("1,2,128,16,true,fp32,sdpa-flash,ok,"));
  CHECK_THAT(testing::read_file(out / "attention.md"), Catch::Contains("| Seq | Causal | Implementation |"));
}

TEST_CASE("attention: bad input exits 2 before anything runs", "[cli]") {
  temp_dir tmp("bad");
  const auto out = tmp.path / "out";
  auto r = run_cli_args(out, "--impl naive,flashh --memory-cap lots");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("error: --impl: no implementation named \"flashh\""));
  CHECK_THAT(r.output, Catch::Contains("error: --memory-cap: expected a size"));
  CHECK_FALSE(fs::exists(out / "attention.csv"));
}

TEST_CASE("attention: byte sizes parse with binary units", "[cli]") {
  CHECK(parse_byte_size("1GiB") == (int64_t{1} << 30));
  CHECK(parse_byte_size("512MiB") == (int64_t{512} << 20));
  CHECK(parse_byte_size("1.5KiB") == 1536);
  CHECK(parse_byte_size("4096") == 4096);
  CHECK(parse_byte_size("0") == 0);
  CHECK_FALSE(parse_byte_size("1GB").has_value());
  CHECK_FALSE(parse_byte_size("-1MiB").has_value());
  CHECK_FALSE(parse_byte_size("big").has_value());
}
