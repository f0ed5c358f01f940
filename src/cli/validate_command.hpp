// `attnbench validate CONFIG`: report every config problem, run nothing.
#pragma once

#include <string>

#include "config/config.hpp"

#include <CLI/CLI.hpp>

namespace attnbench {

struct validate_command_options {
  std::string config_path;
  bool no_cost_check = false;  // skip the memory and time estimates (config/cost_check.hpp)
};

// The cost check of `validate` and `run` (config/cost_check.hpp), on the config and on every point
// of its sweep: throws input_error with each estimate over this machine's budget.
void check_cost(const config& cfg);

void setup_validate(CLI::App& app, validate_command_options& opts);
int run_validate(const validate_command_options& opts);  // exit code

}  // namespace attnbench
