#include "cli/profile_command.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cli/console.hpp"
#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "runner/config_checks.hpp"
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

namespace {

// A sweep config: one profile per point, in <dir>/<point label>/, then the attention share and
// each variant's attention time per layer at every point side by side (sweep-breakdown.md, .csv):
// where attention's share moves across the grid, and which variant's attention is fastest where.
int run_profile_sweep(const profile_command_options& opts, const config& cfg, const std::vector<std::string>& variants,
                      const fs::path& dir, console& out) {
  if (cfg.model.family != model_family::bert)
    throw input_error("sweep", "a profile sweep compares attention breakdowns, which a decoder (gpt2, llama) does not "
                               "record: profile one point at a time, or run the sweep with `attnbench run`");
  const auto points = expand_sweep(*cfg.sweep);
  const auto configs = checked_sweep_points(cfg, points, detect_device_caps());
  std::vector<problem> problems;
  for (const auto& p : points)
    for (auto& q : profile_output_problems(dir / safe_file_name(p.label()), variants, opts.force,
                                           opts.out.empty() ? "output.dir" : "--out", "--out"))
      problems.push_back(std::move(q));
  for (auto& q : output_problems({dir / "sweep-breakdown.md", dir / "sweep-breakdown.csv"}, opts.force,
                                 opts.out.empty() ? "output.dir" : "--out", "--out"))
    problems.push_back(std::move(q));
  if (!problems.empty()) throw input_error(std::move(problems));
  std::string md = fmt::format(
      "# {}: attention profile per sweep point\n\nDevice {}. Attention share: the attention.* regions' time over "
      "the encoder layers' time (breakdown.md of each point's directory). Attention ms/layer: those regions' time "
      "per recorded layer. Fastest: the variant whose attention took least per layer at the point.\n\n"
      "| point | variant | attention share | attention ms/layer | layer ms | fastest attention |\n"
      "|---|---|---:|---:|---:|---|\n",
      cfg.name, cfg.device);
  std::string csv = "point,variant,attention_share,attention_ms_per_layer,layer_ms,fastest\n";
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string label = points[i].label();
    out.info(fmt::format("attnbench: profiling point {} of {}: {}", i + 1, points.size(), label));
    const fs::path point_dir = dir / safe_file_name(label);
    const profile_outcome outcome =
        profile_experiment(configs[i], variants, point_dir, opts.force, [&](const std::string& s) { out.log(s); });
    const auto per_layer = [](const region_breakdown& b, int64_t ns) {
      return b.layers > 0 ? static_cast<double>(ns) / static_cast<double>(b.layers) / 1e6 : 0.0;
    };
    std::string fastest;
    double best = 0;
    for (const auto& v : outcome.variants) {
      const double ms = per_layer(v.breakdown, v.breakdown.attention_ns);
      if (fastest.empty() || ms < best) {
        fastest = v.name;
        best = ms;
      }
    }
    for (const auto& v : outcome.variants) {
      const auto& b = v.breakdown;
      const double attention_ms = per_layer(b, b.attention_ns);
      const double layer_ms = per_layer(b, b.layer_ns);
      md += fmt::format("| {} | {} | {:.1f}% | {:.3f} | {:.3f} | {} |\n", label, v.name, 100 * b.attention_share,
                        attention_ms, layer_ms, v.name == fastest ? "**yes**" : "");
      csv += fmt::format("\"{}\",\"{}\",{:.6f},{:.6f},{:.6f},{}\n", label, v.name, b.attention_share, attention_ms,
                         layer_ms, v.name == fastest ? "true" : "false");
    }
  }
  write_files_atomic({{dir / "sweep-breakdown.md", md}, {dir / "sweep-breakdown.csv", csv}});
  fmt::print("{}", md);
  out.info(fmt::format("wrote one profile per point and sweep-breakdown.md/.csv to {}", dir.string()));
  return exit_ok;
}

}  // namespace

int run_profile(const profile_command_options& opts) {
  console out(opts.quiet ? verbosity::quiet : opts.verbose ? verbosity::verbose : verbosity::normal);
  const config cfg = load_checked_config(opts.config_path, detect_device_caps());
  const std::vector<std::string> variants =
      opts.variants.empty() ? default_profile_variants(cfg) : opts.variants;
  check_profile_variants(cfg, variants, "--variant");
  const fs::path dir = opts.out.empty() ? fs::path(cfg.output.dir) / "profile" : fs::path(opts.out);
  if (cfg.sweep) return run_profile_sweep(opts, cfg, variants, dir, out);
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
  fmt::print("{}\n", profile_summary_markdown(cfg, outcome));
  out.info(
      fmt::format("wrote profile.md, breakdown.md/.csv, traces and operator tables to {}", dir.string()));
  monitor.finish(dir / "metrics.prom");
  return exit_ok;
}

}  // namespace attnbench
