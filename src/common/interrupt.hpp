// Ctrl-C and SIGTERM during a run: the first signal asks the run to stop at the next pass
// boundary and write every report with what was measured, marked incomplete (README "What happens
// when things go wrong"); a second one ends the process at once. Reports are written atomically
// (report/file_output.hpp), so even then no file is left half-written under its own name.
//
// The measurement loop and the sweep poll interrupt_signal() between passes and points; nothing
// is interrupted inside a pass, whose time would mean nothing.
#pragma once

#include <string>

namespace attnbench {

// The signal that asked the run to stop (SIGINT, SIGTERM), or 0.
int interrupt_signal();

// What a signal asks for, without a signal: tests stop a run at a chosen phase with it.
void request_interrupt(int signal_number);
void clear_interrupt();

// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal_number);

// The documented exit status of a run stopped by the signal: 128 + its number (130, 143).
int interrupted_exit_status(int signal_number);

// Installs the SIGINT and SIGTERM handlers for its lifetime and restores the previous ones after.
// The first signal is recorded; a second one (of either kind) exits at once with 128 + its number.
class interrupt_handlers {
 public:
  interrupt_handlers();
  ~interrupt_handlers();
  interrupt_handlers(const interrupt_handlers&) = delete;
  interrupt_handlers& operator=(const interrupt_handlers&) = delete;

 private:
  struct saved;
  saved* saved_;
};

}  // namespace attnbench
