// `attnbench serve CONFIG` (hidden): one build's side of `attnbench ab`. It builds the config's
// model, workload and offline scenario, then runs single passes as the parent asks over stdin
// and stdout (cli/serve_protocol.hpp), timing each with its own clock. Not for users: `ab` starts it.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace attnbench {

struct serve_command_options {
  std::string config_path;
  // Test-only: this variant's check-pass outputs are scaled by 1.1 before they are handed over, so
  // the parent's check must FAIL the build. Only the test-hooks binary (tests/hooks/) sets it.
  std::string perturb;
};

void setup_serve(CLI::App& app, serve_command_options& opts);

struct config;
// Refuses (input_error with the JSON path) what `ab` cannot drive one pass at a time in one process
// per build: a sweep, the train scenario, multi-process variants.
void check_servable(const config& cfg);
int run_serve(const serve_command_options& opts);  // exit code

}  // namespace attnbench
