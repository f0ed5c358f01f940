#include "cli/console.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace attnbench {

console::console(verbosity level) : level_(level), tty_(isatty(STDERR_FILENO) == 1) {}

void console::progress(const progress_event& e) {
  if (!tty_ || level_ == verbosity::quiet) return;
  // Estimate from the share of passes done; the timed phase may run longer when min_time_s asks.
  if (e.phase != phase_) {
    phase_ = e.phase;
    phase_start_s_ = e.elapsed_s;
  }
  std::string eta = "?";
  if (e.done > 0 && e.total > e.done)
    eta = fmt::format("{:.0f}s", (e.elapsed_s - phase_start_s_) / static_cast<double>(e.done) *
                                     static_cast<double>(e.total - e.done));
  fmt::print(stderr, "\r\033[K[{}] {} pass {}/{}  elapsed {:.0f}s  left ~{} (this phase)", e.phase, e.variant, e.done + 1,
             e.total, e.elapsed_s, eta);
  std::fflush(stderr);
  line_open_ = true;
}

void console::finish_progress() {
  if (line_open_) fmt::print(stderr, "\r\033[K");
  line_open_ = false;
}

void console::log(const std::string& line) {
  if (level_ != verbosity::verbose) return;
  finish_progress();
  fmt::print(stderr, "{}\n", line);
}

void console::info(const std::string& line) {
  if (level_ == verbosity::quiet) return;
  finish_progress();
  fmt::print(stderr, "{}\n", line);
}

}  // namespace attnbench
