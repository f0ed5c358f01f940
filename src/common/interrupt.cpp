#include "common/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace attnbench {
namespace {

std::atomic<int> requested{0};

extern "C" void on_signal(int signal_number) {
  int expected = 0;
  // The second signal: the user does not want to wait for the current pass. _exit is
  // async-signal-safe; every report file is written by rename, so none is half-written.
  if (!requested.compare_exchange_strong(expected, signal_number)) ::_exit(128 + signal_number);
  static const char msg[] = "\nattnbench: stopping after the current pass and writing what was measured "
                            "(send the signal again to quit at once)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

}  // namespace

int interrupt_signal() { return requested.load(); }
void request_interrupt(int signal_number) { requested.store(signal_number); }
void clear_interrupt() { requested.store(0); }

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

int interrupted_exit_status(int signal_number) { return 128 + signal_number; }

struct interrupt_handlers::saved {
  struct sigaction int_action {};
  struct sigaction term_action {};
};

interrupt_handlers::interrupt_handlers() : saved_(new saved) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &saved_->int_action);
  sigaction(SIGTERM, &sa, &saved_->term_action);
}

interrupt_handlers::~interrupt_handlers() {
  sigaction(SIGINT, &saved_->int_action, nullptr);
  sigaction(SIGTERM, &saved_->term_action, nullptr);
  delete saved_;
}

}  // namespace attnbench
