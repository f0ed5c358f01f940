#include "install_test_hooks.hpp"

#include <csignal>
#include <cstdlib>

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
}

}  // namespace attnbench
