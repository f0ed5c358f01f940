// `attnbench study CONFIG`: the accuracy check's float64 study alone (runner/decision_study.hpp),
// per precision class, on the config's model and samples. It says how much each class's rounding
// moves the outputs and the predictions, and derives the class's tolerance the way
// common/precision_classes.hpp's were derived (4 × the largest relative L2 error of a randomly
// rounded run, rounded up to a 1-2-5 step), beside the tolerance the check uses.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attnbench {

struct study_command_options {
  std::string config_path;
  std::vector<std::string> classes{"fp32", "bf16", "fp16", "int8"};
  std::string out;  // default: <output.dir>/study
  bool force = false;
  bool quiet = false;
};

void setup_study(CLI::App& app, study_command_options& opts);
int run_study(const study_command_options& opts);  // exit code

// The tolerance derived from a class's largest relative L2 error: 4× it, rounded up to 1, 2 or 5
// times a power of ten.
double derived_tolerance(double largest_rel_l2);

}  // namespace attnbench
