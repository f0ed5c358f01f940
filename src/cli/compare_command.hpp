// `attnbench compare BASE.json NEW.json`: is NEW slower than BASE, or newly wrong? Prints the
// comparison as markdown and exits 1 on a regression (README "Exit status").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "report/comparison.hpp"

namespace attnbench {

struct compare_command_options {
  std::string base_path;
  std::string new_path;
  std::string threshold;  // "5%" or "0.05"; empty for compare_defaults::threshold
  double alpha = compare_defaults::alpha;
  std::string out;      // directory for compare.json and compare.md; empty for none
  std::string junit;    // JUnit XML path; empty for none
  bool strict = false;  // different model/workload/config/machine → exit 2 instead of a warning
  bool force = false;   // overwrite earlier compare files
  std::string normalize = "none";  // "none" | "ceiling" (report/comparison.hpp: normalization)
};

void setup_compare(CLI::App& app, compare_command_options& opts);
int run_compare(const compare_command_options& opts);  // exit code

// "5%" → 0.05, "0.05" → 0.05; a bare number must lie in [0, 1] (so "5" is not read as 500%).
// Throws input_error naming --threshold otherwise.
double parse_threshold(const std::string& text);

}  // namespace attnbench
