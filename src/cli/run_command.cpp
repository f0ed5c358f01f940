#include "cli/run_command.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/console.hpp"
#include "cli/validate_command.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "config/config_parser.hpp"
#include "profile/profile_outputs.hpp"
#include "profile/profile_runner.hpp"
#include "report/file_output.hpp"
#include "report/junit_writer.hpp"
#include "report/make_writers.hpp"
#include "report/markdown_writer.hpp"
#include "report/npy_writer.hpp"
#include "parallel/distributed_world.hpp"
#include "parallel/rank_env.hpp"
#include "core/device.hpp"
#include "runner/runner.hpp"
#include "runner/sweep_runner.hpp"
#include "report/sweep_result_json.hpp"
#include "report/sweep_writers.hpp"

namespace fs = std::filesystem;

namespace attnbench {
namespace {

// Output files of --save-outputs: outputs/<variant>.npy, the name reduced to safe characters.
std::string safe_name(std::string name) {
  std::replace_if(name.begin(), name.end(), [](char c) { return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'); }, '_');
  return name;
}

fs::path outputs_file(const fs::path& dir, const std::string& variant) {
  return dir / "outputs" / (safe_name(variant) + ".npy");
}

void save_outputs(const fs::path& file, const torch::Tensor& t) {
  fs::create_directories(file.parent_path());
  const auto c = t.contiguous();
  write_file_atomic(file, encode_npy_f32(c.data_ptr<float>(), c.sizes().vec()));
}

// Where a run's final metrics go: metrics.prom beside the reports (rank r > 0 of a multi-process
// run: metrics-rank<r>.prom, since every rank serves its own).
fs::path metrics_file(const fs::path& dir, const std::optional<rank_env>& env) {
  return dir / (env && env->rank > 0 ? fmt::format("metrics-rank{}.prom", env->rank) : "metrics.prom");
}

// The live monitor's view of the run, and the progress line with the variant's current throughput.
void watch(run_options& ro, live_monitor& monitor, console& out, const config& cfg) {
  ro.observer = &monitor;
  ro.on_progress = [&monitor, &out](const progress_event& e) {
    monitor.on_progress(e);
    out.progress(e, monitor.last_throughput(e.variant));
  };
  const torch::Device device = resolve_device(cfg.device);
  if (device.is_cuda()) monitor.watch_cuda_device(device.has_index() ? device.index() : 0);
  if (monitor.enabled()) out.info("attnbench: live metrics at " + monitor.endpoint());
}

// 0, or 3 when a variant FAILs (wrong outputs come first), else 6 when one hit a resource limit.
int run_exit_status(bool all_passed, bool any_limit_hit) {
  return !all_passed ? exit_check_failed : any_limit_hit ? exit_limit : exit_ok;
}

// A sweep: every point validated before anything runs, then run in the grid's order; the reports
// are rendered in full before the first file is written.
int run_sweep_command(const config& cfg, const run_command_options& opts, console& out) {
  const std::vector<sweep_point> points = expand_sweep(*cfg.sweep);
  const std::vector<config> configs = sweep_point_configs(cfg, points, detect_device_caps());
  const fs::path dir = opts.out.empty() ? fs::path(cfg.output.dir) : fs::path(opts.out);
  const auto has = [&](const char* f) { return std::count(cfg.output.formats.begin(), cfg.output.formats.end(), f) > 0; };
  std::vector<fs::path> files;
  if (has("json")) files.push_back(dir / "results.json");
  if (has("csv")) files.push_back(dir / "results.csv");
  if (has("md")) {
    files.push_back(dir / "report.md");
    files.push_back(dir / "sweep.svg");
  }
  const auto point_outputs = [&](size_t i, const std::string& variant) {
    return dir / "outputs" / safe_name(points[i].label()) / (safe_name(variant) + ".npy");
  };
  if (opts.save_outputs)
    for (size_t i = 0; i < points.size(); ++i)
      for (const auto& v : configs[i].variants)
        if (!v.pending) files.push_back(point_outputs(i, v.name));
  if (opts.monitor.enabled()) files.push_back(metrics_file(dir, std::nullopt));
  std::vector<problem> problems = output_problems(files, opts.force, "output.dir", "--out");
  if (!opts.junit.empty())
    for (auto& p : output_problems({opts.junit}, opts.force, "--junit", "--junit")) problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  const interrupt_handlers handlers;  // Ctrl-C: stop after the current pass, write what was measured
  run_options ro;
  ro.on_log = [&](const std::string& s) { out.log(s); };
  if (!opts.perturb.empty()) ro.perturb_variant = opts.perturb;
  live_monitor monitor(opts.monitor, cfg.name, std::nullopt);
  watch(ro, monitor, out, cfg);
  out.info(fmt::format("attnbench: sweeping {} over {} points on {}", cfg.name, points.size(), cfg.device));
  const sweep_outcome outcome = run_sweep(cfg, points, configs, ro, [&](size_t i, size_t n, const std::string& label) {
    out.finish_progress();
    out.info(fmt::format("point {}/{}: {}", i + 1, n, label));
  });
  out.finish_progress();
  out.log(fmt::format("models built: {} for {} points", outcome.models_built, points.size()));

  std::vector<std::pair<fs::path, std::string>> rendered;
  if (has("json")) rendered.emplace_back(dir / "results.json", sweep_result_to_json(outcome.result).dump(2) + "\n");
  if (has("csv")) rendered.emplace_back(dir / "results.csv", sweep_csv(outcome.result));
  if (has("md")) {
    rendered.emplace_back(dir / "report.md", sweep_markdown(outcome.result, "sweep.svg"));
    rendered.emplace_back(dir / "sweep.svg", sweep_svg(outcome.result));
  }
  fs::create_directories(dir);
  write_files_atomic(rendered);
  if (opts.save_outputs)
    for (size_t i = 0; i < outcome.outputs.size(); ++i)  // fewer than the points when interrupted
      for (const auto& [name, t] : outcome.outputs[i]) save_outputs(point_outputs(i, name), t);
  if (!opts.junit.empty()) write_output_file(opts.junit, junit_xml(junit_suite_of(flatten_sweep(outcome.result))));

  for (const auto& p : outcome.result.points) {
    fmt::print("### {}\n\n{}\n", p.label(), markdown_table(p.result));
    for (const auto& v : p.result.variants)
      if (v.status != status_kind::pass) fmt::print("{} {} [{}]: {}\n", to_string(v.status), v.name, p.label(), v.reason);
  }
  out.info(fmt::format("wrote {} to {}", fmt::join(cfg.output.formats, ", "), dir.string()));
  monitor.finish(metrics_file(dir, std::nullopt));
  if (!outcome.result.complete) {
    out.info(fmt::format("attnbench: incomplete: {} ({} of {} points)", outcome.result.incomplete_reason,
                         outcome.result.points.size(), outcome.result.points_planned));
    return interrupted_exit_status(interrupt_signal());
  }
  return run_exit_status(outcome.result.all_passed(), outcome.result.any_limit_hit());
}

// A rank of a multi-process run: what it may run. Throws input_error for a config that gives the
// ranks nothing to do together.
void check_multi_process(const config& cfg, const rank_env& env, const run_command_options& opts) {
  const bool collective = std::any_of(cfg.variants.begin(), cfg.variants.end(), [](const variant_config& v) {
    return !v.pending && v.parallel && v.parallel->mode == parallel_mode::processes;
  });
  const std::string who = fmt::format("this process is rank {} of {} ({} environment)", env.rank, env.world_size,
                                      env.source);
  if (!collective)
    throw input_error("variants", fmt::format("{}, but no variant has \"parallel\": {{\"mode\": \"processes\"}}: "
                                              "nothing would run across the ranks",
                                              who));
  if (cfg.sweep) throw input_error("sweep", who + ": sweeps run in a single process");
  if (opts.profile) throw input_error("--profile", who + ": profile in a single process");
}

}  // namespace

void setup_run(CLI::App& app, run_command_options& opts) {
  auto* cmd = app.add_subcommand("run", "Run every variant of an experiment, check outputs, write reports");
  cmd->add_option("config", opts.config_path, "Experiment config (JSON)")->required();
  cmd->add_option("--out", opts.out, "Output directory (overrides the config's output.dir)");
  cmd->add_flag("--force", opts.force, "Overwrite result files of an earlier run in the output directory");
  cmd->add_flag("--save-outputs", opts.save_outputs, "Also write each variant's logits as outputs/<variant>.npy");
  cmd->add_flag("--profile", opts.profile,
                "Also profile every variant into <out>/profile, as `attnbench profile` does");
  cmd->add_option("--junit", opts.junit, "Also write a JUnit XML report: one test case per variant check");
  cmd->add_flag("-q,--quiet", opts.quiet, "Print only the table and errors");
  cmd->add_flag("-v,--verbose", opts.verbose, "Print each step on stderr");
  add_monitor_options(*cmd, opts.monitor, /*tensorboard=*/true);
  cmd->add_flag("--no-cost-check", opts.no_cost_check,
                "Run even when the estimates of memory or run time say this machine cannot (see `validate`)");
}

int run_run(const run_command_options& opts) {
  const auto env = rank_env_from_process();
  const bool rank0 = !env || env->rank == 0;
  // Ranks other than 0 write nothing and print only errors: rank 0 reports for all.
  console out(opts.quiet || !rank0 ? verbosity::quiet : opts.verbose ? verbosity::verbose : verbosity::normal);
  config cfg = load_config(opts.config_path, detect_device_caps());
  if (!opts.no_cost_check) check_cost(cfg);
  if (env) check_multi_process(cfg, *env, opts);
  if (!opts.perturb.empty() && !find_variant(cfg, opts.perturb))
    throw input_error("--test-perturb-outputs", fmt::format("no variant named \"{}\"", opts.perturb));
  if (cfg.sweep && opts.profile)
    throw input_error("--profile", "not available with a sweep: profile a point with `attnbench profile` on a config "
                                   "without the sweep block");
  if (cfg.sweep) return run_sweep_command(cfg, opts, out);
  const fs::path dir = opts.out.empty() ? fs::path(cfg.output.dir) : fs::path(opts.out);
  const auto writers = make_writers(cfg.output.formats);
  std::vector<fs::path> files;
  for (const auto& w : writers) files.push_back(dir / w->file_name());
  if (opts.save_outputs)
    for (const auto& v : cfg.variants)
      if (!v.pending) files.push_back(outputs_file(dir, v.name));
  if (opts.monitor.enabled()) files.push_back(metrics_file(dir, std::nullopt));
  std::vector<problem> problems = rank0 ? output_problems(files, opts.force, "output.dir", "--out")
                                        : std::vector<problem>{};
  if (!opts.junit.empty() && rank0)
    for (auto& p : output_problems({opts.junit}, opts.force, "--junit", "--junit"))
      problems.push_back(std::move(p));
  if (opts.profile)
    for (auto& p : profile_output_problems(dir / "profile", default_profile_variants(cfg), opts.force,
                                           "output.dir", "--out"))
      problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  const interrupt_handlers handlers;  // Ctrl-C: stop after the current pass, write what was measured
  run_options ro;
  ro.on_log = [&](const std::string& s) { out.log(s); };
  if (!opts.perturb.empty()) ro.perturb_variant = opts.perturb;
  live_monitor monitor(opts.monitor, cfg.name, env ? std::optional<int>(env->rank) : std::nullopt);
  watch(ro, monitor, out, cfg);
  std::unique_ptr<distributed_world> world;
  if (env) {
    world = std::make_unique<distributed_world>(*env, cfg.distributed, resolve_device(cfg.device));
    ro.world = world.get();
    ro.measure_ceilings = rank0;  // a ceiling is rank 0's to report; measuring it elsewhere only adds noise
    out.info(fmt::format("attnbench: {} ranks joined through {} ({})", env->world_size, world->where(),
                         world->backend()));
  }
  out.info(fmt::format("attnbench: running {} ({} variants) on {}", cfg.name, cfg.variants.size(), cfg.device));
  run_outcome outcome;
  try {
    outcome = run_experiment(cfg, ro);
  } catch (const std::exception& e) {
    if (world) {
      const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
      world->announce_failure(c10_error ? c10_error->what_without_backtrace() : e.what());
    }
    throw;
  }
  out.finish_progress();
  if (!rank0) {
    monitor.finish(metrics_file(dir, env));
    return outcome.result.complete || !interrupt_signal() ? exit_ok : interrupted_exit_status(interrupt_signal());
  }

  write_reports(outcome.result, writers, dir, opts.force);
  if (opts.save_outputs) {
    fs::create_directories(dir / "outputs");
    for (const auto& [name, t] : outcome.outputs) save_outputs(outputs_file(dir, name), t);
  }

  if (!opts.junit.empty()) write_output_file(opts.junit, junit_xml(junit_suite_of(outcome.result)));
  if (opts.profile && outcome.result.complete) {
    out.info("profiling every variant");
    profile_experiment(cfg, default_profile_variants(cfg), dir / "profile", opts.force,
                       [&](const std::string& s) { out.log(s); });
  }

  if (!outcome.result.complete) fmt::print("INCOMPLETE: {}\n\n", outcome.result.incomplete_reason);
  fmt::print("{}\n", markdown_table(outcome.result));
  if (const std::string server = markdown_server_tables(outcome.result); !server.empty()) fmt::print("{}\n", server);
  for (const auto& v : outcome.result.variants)
    if (v.status != status_kind::pass) fmt::print("{} {}: {}\n", to_string(v.status), v.name, v.reason);
  out.info(fmt::format("wrote {} to {}", fmt::join(cfg.output.formats, ", "), dir.string()));
  monitor.finish(metrics_file(dir, env));
  if (!outcome.result.complete) {
    if (opts.profile) out.info("attnbench: --profile skipped: the run was interrupted");
    return interrupted_exit_status(interrupt_signal());
  }
  return run_exit_status(outcome.result.all_passed(), outcome.result.any_limit_hit());
}

}  // namespace attnbench
