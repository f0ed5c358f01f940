#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "common/error.hpp"
#include "workload/arrivals.hpp"

using namespace attnbench;

TEST_CASE("Poisson arrivals are seeded, bounded and at the asked rate", "[workload]") {
  const auto a = poisson_arrivals(100.0, 2000, 1e9, 7, 10);
  const auto again = poisson_arrivals(100.0, 2000, 1e9, 7, 10);
  CHECK(again.back().t_s == a.back().t_s);
  REQUIRE(a.size() == 2000);
  CHECK(a.back().t_s / 2000 == Approx(0.01).epsilon(0.1));  // mean gap 1/rate
  for (std::size_t i = 1; i < a.size(); ++i) CHECK(a[i].t_s >= a[i - 1].t_s);
  CHECK(a[13].sample == 3);
  const auto bounded = poisson_arrivals(100.0, 2000, 1.0, 7, 10);
  CHECK(bounded.size() < 150);
  CHECK(bounded.back().t_s <= 1.0);
}

TEST_CASE("trace files are checked line by line", "[workload]") {
  const auto dir = std::filesystem::temp_directory_path() / ("attnbench_trace_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& text) {
    const auto p = (dir / "trace.txt").string();
    std::ofstream(p) << text;
    return p;
  };
  CHECK(read_trace(write("# t sample\n0.0 1\n0.5 0\n\n0.5 2\n"), 3).size() == 3);
  const auto error_of = [&](const std::string& text) {
    try {
      read_trace(write(text), 3);
    } catch (const input_error& e) {
      CHECK(e.problems()[0].path == "server.trace");
      return e.problems()[0].message;
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("0.0 0\n0.2 1\n0.1 2\n"), Catch::Contains("trace.txt:3") && Catch::Contains("sorted"));
  CHECK_THAT(error_of("-1 0\n"), Catch::Contains(":1") && Catch::Contains("negative"));
  CHECK_THAT(error_of("0 0\n1 7\n"), Catch::Contains(":2") && Catch::Contains("sample 7 does not exist"));
  CHECK_THAT(error_of("0 zero\n"), Catch::Contains(":1") && Catch::Contains("expected"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a trace's text parses without a file, as read_trace reads the file", "[workload]") {
  std::istringstream text("# t sample\n0.0 1\n0.5 0 # a comment\n\n0.5 2\n");
  const auto a = parse_trace(text, "in-memory.trace", 3);
  REQUIRE(a.size() == 3);
  CHECK(a[1].t_s == 0.5);
  CHECK(a[1].sample == 0);
  std::istringstream unsorted("0.2 1\n0.1 2\n");
  try {
    parse_trace(unsorted, "in-memory.trace", 3);
    FAIL("an unsorted trace was accepted");
  } catch (const input_error& e) {
    CHECK(e.problems()[0].path == "server.trace");
    CHECK_THAT(e.problems()[0].message, Catch::Contains("in-memory.trace:2") && Catch::Contains("sorted"));
  }
}
