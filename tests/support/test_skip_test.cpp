// testing::skip_test (tests/test_support.hpp) and the CI self-check (scripts/ci-selfcheck.sh): a
// test is skipped because of its exit code, never because of text in its output. The hidden
// [.selfcheck] tests run only under CTest's label selfcheck (scripts/test.sh leaves them out):
// one fails while its output says "SKIPPED:", which CTest must report as failed; one skips, which
// CTest must report as skipped with its reason. The visible tests here run them as child
// processes of this binary.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <string>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

// Test names as CTest and scripts/ci-selfcheck.sh know them.
#define FAILING_SELFCHECK "selfcheck: a failing test that prints SKIPPED is reported as failed"
#define SKIPPING_SELFCHECK "selfcheck: a test calling skip_test is reported as skipped with its reason"
const std::string selfcheck_reason = "the self-check skips on purpose";

// Runs one test case of this binary in a child process, as CTest runs each one. The path is
// resolved here: in the child's command line /proc/self/exe would name env(1).
testing::command_result run_this_test(const std::string& name, const std::string& env) {
  return testing::run_program(std::filesystem::read_symlink("/proc/self/exe").string(), "'" + name + "'", env);
}

}  // namespace

TEST_CASE(FAILING_SELFCHECK, "[.selfcheck]") {
  // What a failing golden comparison prints: a report row that says SKIPPED.
  std::cout << "| fp16-flash | SKIPPED: flash backend needs a CUDA device |" << std::endl;
  FAIL("deliberate: CTest must report this test as failed, whatever its output says");
}

TEST_CASE(SKIPPING_SELFCHECK, "[.selfcheck]") {
  testing::skip_test(selfcheck_reason);
}

TEST_CASE("skip_test under CTest prints its reason and ends the test with the skip return code", "[support]") {
  const auto r = run_this_test(SKIPPING_SELFCHECK, "ATTNBENCH_SKIP_RETURN_CODE=" + std::to_string(ATTNBENCH_CTEST_SKIP_CODE));
  INFO(r.output);
  CHECK(r.exit_code == ATTNBENCH_CTEST_SKIP_CODE);
  CHECK_THAT(r.output, Catch::Contains("SKIPPED: " + selfcheck_reason));
}

TEST_CASE("skip_test outside CTest only warns: the test passes and says why it did nothing", "[support]") {
  const auto r = run_this_test(SKIPPING_SELFCHECK, "-u ATTNBENCH_SKIP_RETURN_CODE");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("SKIPPED: " + selfcheck_reason));
}

TEST_CASE("a failing test that prints SKIPPED: exits as a failure, not with the skip return code", "[support]") {
  const auto r = run_this_test(FAILING_SELFCHECK, "ATTNBENCH_SKIP_RETURN_CODE=" + std::to_string(ATTNBENCH_CTEST_SKIP_CODE));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("SKIPPED: flash backend"));
}
