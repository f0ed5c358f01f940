#include "cli/profile_command.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cli/console.hpp"
#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "profile/profile_outputs.hpp"
#include "profile/profile_runner.hpp"
#include "report/file_output.hpp"
#include "runner/runner.hpp"
#include "core/device.hpp"

namespace fs = std::filesystem;

namespace attnbench {

void setup_profile(CLI::App& app, profile_command_options& opts) {
  auto* cmd = app.add_subcommand(
      "profile", "Run variants under the profiler: traces, operator tables, attention breakdown");
  cmd->add_option("config", opts.config_path,
                  "Experiment config (JSON); its `profile` block sets the schedule")
      ->required();
  cmd->add_option("--variant", opts.variants, "Variant to profile (repeatable; default: every variant)");
  cmd->add_option("--out", opts.out, "Output directory (default: <output.dir>/profile)");
  cmd->add_flag("--force", opts.force, "Overwrite the files of an earlier profile in the output directory");
  cmd->add_flag("-q,--quiet", opts.quiet, "Print only the breakdown and errors");
  cmd->add_flag("-v,--verbose", opts.verbose, "Print each step on stderr");
  add_monitor_options(*cmd, opts.monitor, /*tensorboard=*/false);
}

int run_profile(const profile_command_options& opts) {
  console out(opts.quiet ? verbosity::quiet : opts.verbose ? verbosity::verbose : verbosity::normal);
  const config cfg = load_config(opts.config_path, detect_device_caps());
  const std::vector<std::string> variants =
      opts.variants.empty() ? default_profile_variants(cfg) : opts.variants;
  check_profile_variants(cfg, variants, "--variant");
  const fs::path dir = opts.out.empty() ? fs::path(cfg.output.dir) / "profile" : fs::path(opts.out);
  std::vector<problem> problems =
      profile_output_problems(dir, variants, opts.force, opts.out.empty() ? "output.dir" : "--out", "--out");
  if (opts.monitor.enabled())
    for (auto& p : output_problems({dir / "metrics.prom"}, opts.force, opts.out.empty() ? "output.dir" : "--out",
                                   "--out"))
      problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));
  live_monitor monitor(opts.monitor, cfg.name, std::nullopt);
  if (monitor.enabled()) out.info("attnbench: live metrics at " + monitor.endpoint());
  monitor.on_progress({"profile", "", 0, static_cast<int64_t>(variants.size()), 0});

  out.info(fmt::format("attnbench: profiling {} ({} variants) on {}", cfg.name, variants.size(), cfg.device));
  const profile_outcome outcome =
      profile_experiment(cfg, variants, dir, opts.force, [&](const std::string& s) { out.log(s); });
  fmt::print("{}\n", breakdown_markdown(outcome));
  out.info(
      fmt::format("wrote profile.md, breakdown.md/.csv, traces and operator tables to {}", dir.string()));
  monitor.finish(dir / "metrics.prom");
  return exit_ok;
}

}  // namespace attnbench
