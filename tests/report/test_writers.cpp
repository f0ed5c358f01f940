#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "report/csv_writer.hpp"
#include "report/json_writer.hpp"
#include "report/make_writers.hpp"
#include "report/markdown_writer.hpp"
#include "sample_result.hpp"

#ifndef ATTNBENCH_TEST_DATA_DIR
#error "define ATTNBENCH_TEST_DATA_DIR as the tests/ directory"
#endif

using namespace attnbench;

namespace {

std::string render(const writer_base& w, const run_result& r) {
  std::ostringstream out;
  w.write(r, out);
  return out.str();
}

// Compares with tests/report/golden/<file>; ATTNBENCH_UPDATE_GOLDEN=1 rewrites it instead.
void check_golden(const std::string& file, const std::string& actual) {
  const std::string path = std::string(ATTNBENCH_TEST_DATA_DIR) + "/report/golden/" + file;
  const char* update = std::getenv("ATTNBENCH_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("updated " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream expected;
  expected << in.rdbuf();
  CHECK(actual == expected.str());
}

}  // namespace

TEST_CASE("status names and all_passed", "[report]") {
  CHECK(to_string(status_kind::pass) == "PASS");
  CHECK(to_string(status_kind::fail) == "FAIL");
  CHECK(to_string(status_kind::skipped) == "SKIPPED");
  run_result r = testing::sample_result();
  CHECK(r.all_passed());  // SKIPPED does not fail a run
  r.variants[1].status = status_kind::fail;
  CHECK_FALSE(r.all_passed());
  CHECK(run_result{}.all_passed());
}

TEST_CASE("writers match the golden files", "[report]") {
  const run_result r = testing::sample_result();
  SECTION("json") { check_golden("results.json", render(json_writer{}, r)); }
  SECTION("csv") { check_golden("results.csv", render(csv_writer{}, r)); }
  SECTION("markdown") { check_golden("report.md", render(markdown_writer{}, r)); }
}

TEST_CASE("csv quotes per RFC 4180 and leaves undefined values empty", "[report]") {
  const std::string csv = render(csv_writer{}, testing::sample_result());
  CHECK(csv.find(R"(,"static bs=8, pad=longest",)") != std::string::npos);
  CHECK(csv.find(R"(,"flash backend needs a CUDA device, this run is on ""cpu""")") != std::string::npos);
  CHECK(
      csv.find("fp16-flash,SKIPPED,amp-fp16,sdpa,,\"static bs=8, pad=longest\",,,,,,,,,,,,,,,,,,,,\"flash") !=
      std::string::npos);
  CHECK(csv.find("nan") == std::string::npos);
}

TEST_CASE("markdown headline table", "[report]") {
  run_result r = testing::sample_result();
  r.variants[1].name = "a|b";
  const std::string table = markdown_table(r);
  CHECK(table.rfind("| Method | Throughput (samples/s) | Speedup vs baseline |\n| --- | ---: | ---: |\n",
                    0) == 0);
  CHECK(table.find("| fp32-naive | 41.33 ± ") != std::string::npos);
  CHECK(table.find("| a\\|b | 98.20 ± ") != std::string::npos);
  CHECK(table.find("| fp16-flash | — | — (skipped: ") != std::string::npos);
  r.variants[1].status = status_kind::fail;
  CHECK(markdown_table(r).find("| a\\|b (FAIL) |") != std::string::npos);
}

TEST_CASE("make_writers", "[report]") {
  const auto writers = make_writers({"md", "json", "csv"});
  REQUIRE(writers.size() == 3);
  CHECK(writers[0]->name() == "md");
  CHECK(writers[0]->file_name() == "report.md");
  CHECK(writers[1]->file_name() == "results.json");
  CHECK(writers[2]->file_name() == "results.csv");
  CHECK(make_writers({}).empty());
  CHECK_THROWS_AS(make_writers({"xml"}), input_error);
  CHECK_THROWS_WITH(make_writers({"json", "json"}), Catch::Contains("more than once"));
}
