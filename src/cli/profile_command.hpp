// `attnbench profile CONFIG [--variant NAME]…`: runs variants under the Kineto profiler with the
// config's `profile` schedule and writes traces, operator tables and the attention breakdown.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/live_monitor.hpp"

namespace attnbench {

struct profile_command_options {
  std::string config_path;
  std::vector<std::string> variants;  // empty: every variant that is not pending
  std::string out;                    // default: <output.dir>/profile
  bool force = false;
  bool quiet = false;
  bool verbose = false;
  monitor_options monitor;  // process and device metrics while the profiler runs
};

void setup_profile(CLI::App& app, profile_command_options& opts);
int run_profile(const profile_command_options& opts);  // exit code

}  // namespace attnbench
