// The one exception type of the project, and the exit codes main() maps it to.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace attnbench {

// Documented exit codes (README "Exit status"). Only main() turns errors into these.
enum exit_code : int {
  exit_ok = 0,
  exit_regression = 1,    // compare found a regression (later issue)
  exit_bad_input = 2,     // bad config, bad command line, unreadable/unwritable files
  exit_check_failed = 3,  // a variant's outputs did not match the baseline's
  exit_internal = 4,      // anything else: a bug or a runtime failure (e.g. out of memory)
  exit_distributed = 5,   // a rank of a multi-process run died, hung, never joined, or a collective failed
  exit_limit = 6,         // every report written, but some variant is OOM or TIMEOUT (none FAIL)
  // 130 / 143: stopped by SIGINT / SIGTERM; the reports hold what was measured, marked incomplete
  // (common/interrupt.hpp: 128 + the signal's number)
};

// One problem found in user input, with where it is. `path` is a JSON path such as
// `variants[2].precision`, or empty when the problem is not inside a document.
struct problem {
  std::string path;
  std::string message;
  std::string to_string() const { return path.empty() ? message : path + ": " + message; }
};

// Thrown for every error the user can fix (config, files, arguments): maps to exit_bad_input.
class input_error : public std::runtime_error {
 public:
  explicit input_error(std::vector<problem> problems)
      : std::runtime_error(join(problems)), problems_(std::move(problems)) {}
  input_error(std::string path, std::string message)
      : input_error(std::vector<problem>{{std::move(path), std::move(message)}}) {}
  explicit input_error(std::string message) : input_error(std::string{}, std::move(message)) {}

  const std::vector<problem>& problems() const { return problems_; }

 private:
  static std::string join(const std::vector<problem>& ps) {
    std::string out;
    for (const auto& p : ps) {
      if (!out.empty()) out += '\n';
      out += p.to_string();
    }
    return out;
  }
  std::vector<problem> problems_;
};

}  // namespace attnbench
