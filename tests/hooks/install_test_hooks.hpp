// The test-only hooks of attnbench_testhooks: src/main.cpp compiled with ATTNBENCH_TEST_HOOKS=1
// and linked with this file, built only with the tests. The attnbench binary users run has
// neither hook. The CLI tests that plant a fault run this binary (tests/cli/cli_support.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/run_command.hpp"
#include "cli/serve_command.hpp"

namespace attnbench {

// Adds the hooks to the CLI that main() has set up:
//   run --test-perturb-outputs VARIANT   perturbs VARIANT's outputs, so the check must FAIL it;
//   serve --test-perturb-outputs VARIANT scales VARIANT's check-pass outputs by 1.1 before `ab`
//                                        reads them: a build that computes something else;
//   ATTNBENCH_TEST_KILL_RANK=r           (environment) rank r of a multi-process run SIGKILLs
//                                        itself in its third pass of a multi-process variant
//                                        (after the check pass and the warm-up). `launch` starts
//                                        its ranks from its own executable, so they inherit it.
//   ATTNBENCH_TEST_HOLD_RANK_AT_MEET=r   (environment) rank r waits 3 s at every meeting of the
//                                        ranks after announcing itself, before it looks for the
//                                        others: rank 0 must not exit before rank r has seen it.
void install_test_hooks(CLI::App& app, run_command_options& run_opts, serve_command_options& serve_opts);

}  // namespace attnbench
