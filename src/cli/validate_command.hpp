// `attnbench validate CONFIG`: report every config problem, run nothing.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace attnbench {

struct validate_command_options {
  std::string config_path;
};

void setup_validate(CLI::App& app, validate_command_options& opts);
int run_validate(const validate_command_options& opts);  // exit code

}  // namespace attnbench
