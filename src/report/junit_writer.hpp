// JUnit XML, the test-report format CI systems display (GitLab, Jenkins, GitHub Actions through
// test-reporter actions): `run --junit` writes one test case per variant check, `compare
// --junit` one per variant verdict, so a failed check or a regression shows up as a failed test.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/comparison.hpp"
#include "report/result.hpp"

namespace attnbench {

struct junit_case {
  // error: the variant hit a resource limit (OOM, TIMEOUT): not a wrong output, not measured either
  enum class outcome { passed, failed, skipped, error };
  std::string classname;
  std::string name;
  double time_s = not_a_number;  // NaN: written as 0
  outcome result = outcome::passed;
  std::string message;  // <failure message=…> or <skipped message=…>
  std::string detail;   // text of <failure>: the numbers behind the message
  std::string
      output;  // <system-out>, any outcome (e.g. why a passing variant's figures are noisy); empty: none
  // <properties> of the case: the variant's technique metrics ("metric.<name>" = "<value> <unit>")
  std::vector<std::pair<std::string, std::string>> properties;
};

struct junit_suite {
  std::string name;
  std::string timestamp;  // ISO 8601, empty to omit
  std::string hostname;   // empty to omit
  std::vector<junit_case> cases;
};

// <testsuites> holding the one <testsuite>, with tests/failures/errors/skipped counts; every
// text escaped (xml_escape), so any variant name or message gives well-formed XML.
std::string junit_xml(const junit_suite& suite);

// One case per variant: classname = the run's name, name = the variant; FAIL → <failure> with
// the check's message and numbers, SKIPPED → <skipped> with the reason. time = the variant's
// timed passes (Σ workload.samples / throughput sample).
junit_suite junit_suite_of(const run_result& result);

// One case per variant of the comparison: classname = "compare." + NEW's run name; SLOWER or a
// newly failing check → <failure>; NOISY, SKIPPED and removed variants → <skipped>.
junit_suite junit_suite_of(const comparison& c);

}  // namespace attnbench
