#include "cli/compare_command.hpp"

#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "report/comparison.hpp"
#include "report/comparison_json.hpp"
#include "report/comparison_markdown.hpp"
#include "report/file_output.hpp"
#include "report/junit_writer.hpp"
#include "report/result_json.hpp"

namespace fs = std::filesystem;

namespace attnbench {
namespace {

constexpr int json_indent = 2;  // readable in CI artifacts and diffs
constexpr double percent = 100.0;

}  // namespace

double parse_threshold(const std::string& text) {
  std::string number = text;
  const bool is_percent = !number.empty() && number.back() == '%';
  if (is_percent) number.pop_back();
  double value = not_a_number;
  size_t used = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !std::isfinite(value) || value < 0)
    throw input_error("--threshold",
                      fmt::format("expected a non-negative percentage such as 5% or a fraction such "
                                  "as 0.05; got \"{}\"",
                                  text));
  if (is_percent) return value / percent;
  if (value > 1)
    throw input_error("--threshold",
                      fmt::format("{} as a fraction is more than 100%; did you mean {}%?", text, text));
  return value;
}

void setup_compare(CLI::App& app, compare_command_options& opts) {
  auto* cmd = app.add_subcommand("compare", "Compare two results.json files; exit 1 on a regression");
  cmd->add_option("base", opts.base_path, "The reference run's results.json")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("new", opts.new_path, "The run to judge, results.json")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
      "--threshold", opts.threshold,
      fmt::format("Smallest relative change of the throughput (geometric mean) that counts, e.g. 5% or 0.05 "
                  "(default {:g}%)",
                  compare_defaults::threshold * percent));
  cmd->add_option("--alpha", opts.alpha, "Significance level of the two-sided Mann-Whitney U test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--out", opts.out, "Also write compare.json and compare.md into this directory");
  cmd->add_option("--junit", opts.junit, "Also write a JUnit XML report: one test case per variant verdict");
  cmd->add_flag("--strict", opts.strict,
                "Exit 2 when the runs differ in model weights, workload, config, device or LibTorch");
  cmd->add_option("--normalize", opts.normalize,
                  "none: compare samples/s; ceiling: compare samples/s per GFLOP/s of each run's measured matmul "
                  "ceiling for the variant's dtype, so a change of machine does not read as a regression")
      ->check(CLI::IsMember({"none", "ceiling"}))
      ->capture_default_str();
  cmd->add_flag("--force", opts.force,
                "Overwrite compare.json, compare.md or the JUnit file of an earlier compare");
}

int run_compare(const compare_command_options& opts) {
  compare_options options;
  if (!opts.threshold.empty()) options.threshold = parse_threshold(opts.threshold);
  if (!(opts.alpha > 0 && opts.alpha < 1))
    throw input_error("--alpha", fmt::format("must be between 0 and 1, exclusive; got {:g}", opts.alpha));
  options.alpha = opts.alpha;
  options.normalize = opts.normalize == "ceiling" ? normalization::ceiling : normalization::none;

  const run_result base = load_run_result(opts.base_path);  // throws input_error naming the file
  const run_result candidate = load_run_result(opts.new_path);

  const fs::path out_dir = opts.out;
  std::vector<problem> problems;
  if (!opts.out.empty())
    problems =
        output_problems({out_dir / "compare.json", out_dir / "compare.md"}, opts.force, "--out", "--out");
  if (!opts.junit.empty())
    for (auto& p : output_problems({opts.junit}, opts.force, "--junit", "--junit"))
      problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  if (options.normalize == normalization::ceiling)
    for (const auto& [side, run] : {std::pair<const char*, const run_result*>{"BASE", &base}, {"NEW", &candidate}})
      if (run->environment.ceilings.empty())
        throw input_error("--normalize", fmt::format("{} ({}) has no measured matmul ceilings (environment.ceilings "
                                                     "is empty), so its throughput cannot be normalised",
                                                     side, side == std::string("BASE") ? opts.base_path : opts.new_path));
  const comparison c = compare_runs(base, candidate, options, opts.base_path, opts.new_path);
  if (opts.strict && !c.warnings.empty()) {
    std::vector<problem> problems;
    for (const auto& w : c.warnings) problems.push_back({"--strict", w});
    throw input_error(std::move(problems));
  }

  const std::string markdown = comparison_markdown(c);
  if (!opts.out.empty()) {
    const std::string json = comparison_to_json(c).dump(json_indent) + "\n";
    write_output_file(out_dir / "compare.json", json);
    write_output_file(out_dir / "compare.md", markdown);
  }
  if (!opts.junit.empty()) write_output_file(opts.junit, junit_xml(junit_suite_of(c)));
  fmt::print("{}", markdown);
  return c.regressed() ? exit_regression : exit_ok;
}

}  // namespace attnbench
