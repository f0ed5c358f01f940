#include "install_test_hooks.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "parallel/rank_pass_hook.hpp"

namespace attnbench {
namespace {

// The pass in which the rank dies: after the check pass (1) and the warm-up (2), inside the
// timed rounds, where the other ranks are waiting on it in a collective.
constexpr int64_t kill_pass = 3;

int rank_to_kill = -1;

void kill_rank_in_pass(int rank, int64_t pass) {
  if (rank == rank_to_kill && pass == kill_pass) std::raise(SIGKILL);
}

int rank_to_hold = -1;

// Holds the rank at each meeting after it has announced itself, long enough for rank 0 (which
// sees the meeting complete at once) to finish and exit if it did not wait for the others.
void hold_rank_at_meet(int rank, const char* /*tag*/) {
  if (rank == rank_to_hold) std::this_thread::sleep_for(std::chrono::seconds(3));
}

}  // namespace

void install_test_hooks(CLI::App& app, run_command_options& run_opts, serve_command_options& serve_opts) {
  app.get_subcommand("run")->add_option("--test-perturb-outputs", run_opts.perturb,
                                        "Test-only: perturb this variant's outputs (its check must FAIL)");
  app.get_subcommand("serve")->add_option("--test-perturb-outputs", serve_opts.perturb,
                                          "Test-only: hand ab this variant's outputs scaled by 1.1");
  if (const char* kill = std::getenv("ATTNBENCH_TEST_KILL_RANK"); kill && *kill) {
    rank_to_kill = std::atoi(kill);
    set_rank_pass_hook(kill_rank_in_pass);
  }
  if (const char* hold = std::getenv("ATTNBENCH_TEST_HOLD_RANK_AT_MEET"); hold && *hold) {
    rank_to_hold = std::atoi(hold);
    set_rank_meet_hook(hold_rank_at_meet);
  }
}

}  // namespace attnbench
