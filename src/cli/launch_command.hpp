// `attnbench launch --nproc N CONFIG`: starts N local ranks of `attnbench run CONFIG` with the
// variables torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), supervises them, and leaves none behind: when one fails the others get
// distributed.timeout_s to notice and exit, then SIGTERM, then SIGKILL.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/live_monitor.hpp"

namespace attnbench {

struct launch_command_options {
  int nproc = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;       // 0: a free port picked on this host
  // passed on to every rank's `attnbench run`
  std::string config_path;
  std::string out;
  bool force = false;
  bool save_outputs = false;
  std::string junit;
  bool quiet = false;
  bool verbose = false;
  monitor_options monitor;  // rank r serves its metrics on metrics_port + r
};

void setup_launch(CLI::App& app, launch_command_options& opts);
int run_launch(const launch_command_options& opts);  // exit code

}  // namespace attnbench
