// Console output: the progress line on stderr (only when stderr is a terminal) and verbosity.
#pragma once

#include <string>

#include "runner/runner.hpp"

namespace attnbench {

enum class verbosity { quiet, normal, verbose };

class console {
 public:
  explicit console(verbosity level);
  void progress(const progress_event& e);  // rewrites one stderr line; no-op unless a terminal
  void log(const std::string& line);       // stderr, --verbose only
  void info(const std::string& line);      // stderr, unless --quiet
  void finish_progress();                  // ends the progress line

 private:
  verbosity level_;
  bool tty_;
  bool line_open_ = false;
  std::string phase_;            // the phase the progress line is in
  double phase_start_s_ = 0;     // elapsed time when it began: the estimate is per phase
};

}  // namespace attnbench
