// `attnbench report [--formats html] DIR`: renders the reports of an existing results folder from
// its results.json again, e.g. report.html for a run made without it (README "Commands").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace attnbench {

struct report_command_options {
  std::string dir;
  std::string formats = "html";
  std::string out;     // where to write; empty: DIR itself
  bool force = false;  // overwrite files of the same names
};

void setup_report(CLI::App& app, report_command_options& opts);
int run_report(const report_command_options& opts);  // exit code

}  // namespace attnbench
