// `attnbench ab --base BIN_A --candidate BIN_B CONFIG`: two builds measured in one run. Each build
// serves passes from a child process of its own (`BIN serve CONFIG`, cli/serve_command.hpp); the
// parent drives both through the measurement core (runner/measurement_loop.hpp), variant by
// variant, as a two-variant run: check passes, warm-up, then rounds alternating A B, B A, … under
// the config's repetition rule, so the candidate ÷ base ratio is paired per round. The builds'
// outputs are checked against each other. Exit 1 on a SLOWER or FAIL variant (README "CI
// regression runs").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace attnbench {

struct ab_command_options {
  std::string base;
  std::string candidate;
  std::string config_path;
  std::string threshold;  // "5%" or "0.05"; empty for ab_defaults::threshold
  std::string out;        // directory for ab.json and ab.md; empty for none
  std::string junit;      // JUnit XML path; empty for none
  bool force = false;
};

void setup_ab(CLI::App& app, ab_command_options& opts);
int run_ab(const ab_command_options& opts);  // exit code

}  // namespace attnbench
