// `attnbench run CONFIG`: validate, run every variant, check outputs, write the reports.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/live_monitor.hpp"

namespace attnbench {

struct run_command_options {
  std::string config_path;
  std::string out;          // overrides output.dir
  bool force = false;       // overwrite an earlier run's files
  bool save_outputs = false;
  bool profile = false;     // also profile every variant into <dir>/profile (attnbench profile)
  std::string junit;        // JUnit XML report path; empty for none
  std::string formats;      // --formats json,md,html: overrides output.formats; empty keeps the config's
  bool quiet = false;
  bool verbose = false;
  monitor_options monitor;  // --metrics-port, --metrics-address, --metrics-hold-s
  bool no_cost_check = false;  // skip the memory and time estimates (config/cost_check.hpp)
  std::string resume;       // --resume DIR: continue the interrupted run in DIR (runner/resume_state.hpp)
  // Test-only: a variant whose outputs are perturbed, so the suite can prove a mismatch is caught.
  // Only the test-hooks binary (tests/hooks/) has a flag that sets it; attnbench has none.
  std::string perturb;
};

void setup_run(CLI::App& app, run_command_options& opts);
int run_run(const run_command_options& opts);  // exit code

}  // namespace attnbench
