#include "cli/validate_command.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "runner/config_checks.hpp"
#include "config/cost_check.hpp"
#include "report/file_output.hpp"
#include "core/device.hpp"
#include "workload/dataset.hpp"
#include "workload/workload_checks.hpp"

namespace attnbench {

void setup_validate(CLI::App& app, validate_command_options& opts) {
  auto* cmd = app.add_subcommand("validate", "Check a config and report every problem; runs nothing");
  cmd->add_option("config", opts.config_path, "Experiment config (JSON)")->required();
  cmd->add_flag("--no-cost-check", opts.no_cost_check,
                "Skip the estimates of memory and run time that refuse a config this machine cannot run");
}

void check_cost(const config& cfg) {
  const machine_budget machine = this_machine_budget();
  std::vector<problem> problems = cost_problems(cfg, machine);
  if (cfg.sweep) {
    const auto points = expand_sweep(*cfg.sweep);
    const auto configs = checked_sweep_points(cfg, points, detect_device_caps());
    for (size_t i = 0; i < configs.size() && problems.empty(); ++i)
      for (auto& p : cost_problems(configs[i], machine))
        problems.push_back({p.path, fmt::format("{} (at sweep point {})", p.message, points[i].label())});
  }
  if (!problems.empty()) throw input_error(std::move(problems));
}

int run_validate(const validate_command_options& opts) {
  const config cfg = load_checked_config(opts.config_path, detect_device_caps());  // throws input_error
  if (!opts.no_cost_check) check_cost(cfg);  // before the workload is generated: it may not fit
  // The output directory must be one this run can create and write (existing files are `run`'s
  // concern: --force).
  if (auto ps = output_problems({std::filesystem::path(cfg.output.dir) / "results.json"}, true, "output.dir", "--out");
      !ps.empty())
    throw input_error(std::move(ps));
  check_config_against_workload(cfg, make_dataset(cfg.workload, cfg.model));
  if (cfg.sweep) {
    const auto points = expand_sweep(*cfg.sweep);
    const auto configs = checked_sweep_points(cfg, points, detect_device_caps());  // throws input_error
    for (size_t i = 0; i < configs.size(); ++i) {
      try {
        check_config_against_workload(configs[i], make_dataset(configs[i].workload, configs[i].model));
      } catch (const input_error& e) {
        std::vector<problem> problems;
        for (const auto& p : e.problems())
          problems.push_back({p.path, fmt::format("{} (at sweep point {})", p.message, points[i].label())});
        throw input_error(std::move(problems));
      }
    }
    fmt::print("{}: OK (sweep of {} points over {} variants, baseline \"{}\")\n", opts.config_path, points.size(),
               configs.front().variants.size(), cfg.baseline);
    return exit_ok;
  }
  std::size_t runnable = 0;
  for (const auto& v : cfg.variants) runnable += v.pending ? 0 : 1;
  fmt::print("{}: OK ({} variants, {} runnable, baseline \"{}\")\n", opts.config_path, cfg.variants.size(), runnable,
             cfg.baseline);
  return exit_ok;
}

}  // namespace attnbench
