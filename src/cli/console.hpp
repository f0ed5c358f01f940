// Console output: the progress on stderr and verbosity. On a terminal one line rewritten in place
// (phase, variant, pass k of n, elapsed, time left, current throughput); otherwise a plain line
// when the phase changes and at most every plain_progress_interval_s; nothing with --quiet.
#pragma once

#include <limits>
#include <string>

#include "runner/runner.hpp"

namespace attnbench {

enum class verbosity { quiet, normal, verbose };

class console {
 public:
  explicit console(verbosity level);
  // samples_per_s: the variant's last timed pass (NaN: none yet, not shown).
  void progress(const progress_event& e, double samples_per_s = std::numeric_limits<double>::quiet_NaN());
  void log(const std::string& line);       // stderr, --verbose only
  void info(const std::string& line);      // stderr, unless --quiet
  void finish_progress();                  // ends the progress line

 private:
  verbosity level_;
  bool tty_;
  bool line_open_ = false;
  std::string phase_;            // the phase the progress line is in
  double phase_start_s_ = 0;     // elapsed time when it began: the estimate is per phase
  double last_plain_s_ = -1;     // when the last plain line was printed (not a terminal)
};

}  // namespace attnbench
