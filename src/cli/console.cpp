#include "cli/console.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <unistd.h>

namespace attnbench {
namespace {

// Without a terminal, progress lines pile up in a log: one per phase, then one this often.
constexpr double plain_progress_interval_s = 10;

}  // namespace

console::console(verbosity level) : level_(level), tty_(isatty(STDERR_FILENO) == 1) {}

void console::progress(const progress_event& e, double samples_per_s) {
  if (level_ == verbosity::quiet) return;
  // Estimate from the share of passes done; the timed phase may run longer when min_time_s asks.
  const bool new_phase = e.phase != phase_;
  if (new_phase) {
    phase_ = e.phase;
    phase_start_s_ = e.elapsed_s;
  }
  std::string eta = "?";
  if (e.done > 0 && e.total > e.done)
    eta = fmt::format("{:.0f}s", (e.elapsed_s - phase_start_s_) / static_cast<double>(e.done) *
                                     static_cast<double>(e.total - e.done));
  const std::string rate = std::isnan(samples_per_s) ? "" : fmt::format("  {:.1f} samples/s", samples_per_s);
  const std::string text = fmt::format("[{}] {} pass {}/{}  elapsed {:.0f}s  left ~{} (this phase){}", e.phase,
                                       e.variant, e.done + 1, e.total, e.elapsed_s, eta, rate);
  if (!tty_) {
    if (!new_phase && e.elapsed_s - last_plain_s_ < plain_progress_interval_s) return;
    last_plain_s_ = e.elapsed_s;
    fmt::print(stderr, "{}\n", text);
    return;
  }
  fmt::print(stderr, "\r\033[K{}", text);
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
