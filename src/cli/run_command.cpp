#include "cli/run_command.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>

#include "cli/console.hpp"
#include "cli/validate_command.hpp"
#include "common/cpu_info.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "config/config_parser.hpp"
#include "runner/config_checks.hpp"
#include "profile/profile_outputs.hpp"
#include "profile/profile_runner.hpp"
#include "report/file_output.hpp"
#include "report/json_reader.hpp"
#include "report/junit_writer.hpp"
#include "report/make_writers.hpp"
#include "report/markdown_writer.hpp"
#include "report/npy_writer.hpp"
#include "report/result_json.hpp"
#include "parallel/distributed_world.hpp"
#include "parallel/rank_env.hpp"
#include "core/device.hpp"
#include "core/process_device.hpp"
#include "runner/resume_state.hpp"
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
void watch(run_options& ro, live_monitor& monitor, console& out, torch::Device device) {
  ro.observer = &monitor;
  ro.on_progress = [&monitor, &out](const progress_event& e) {
    monitor.on_progress(e);
    out.progress(e, monitor.last_throughput(e.variant));
  };
  if (device.is_cuda()) monitor.watch_cuda_device(device.has_index() ? device.index() : 0);
  if (monitor.enabled()) out.info("attnbench: live metrics at " + monitor.endpoint());
}

// 0, or 3 when a variant FAILs (wrong outputs come first), else 6 when one hit a resource limit.
int run_exit_status(bool all_passed, bool any_limit_hit) {
  return !all_passed ? exit_check_failed : any_limit_hit ? exit_limit : exit_ok;
}

// --resume DIR: the interrupted run's resume.json, checked against this config and this machine
// before anything runs (README "What happens when things go wrong").
resume_file open_resume(const config& cfg, const run_command_options& opts) {
  const fs::path dir = opts.resume;
  if (!opts.out.empty() && fs::path(opts.out).lexically_normal() != dir.lexically_normal())
    throw input_error("--out", fmt::format("--resume writes into the directory it resumes ({}): leave --out out",
                                           dir.string()));
  if (!fs::is_directory(dir)) throw input_error("--resume", fmt::format("{}: not a directory", dir.string()));
  resume_file rf = read_resume_file(dir / resume_file_name);
  const std::string path = (dir / resume_file_name).string();
  if (rf.config_hash != config_hash_of(cfg.raw))
    throw input_error("--resume", fmt::format("{} belongs to another config (hash {}; {} has {}): a resumed run must "
                                              "be the same experiment. Run this config afresh instead",
                                              path, rf.config_hash, opts.config_path, config_hash_of(cfg.raw)));
  if (rf.kind != (cfg.sweep ? "sweep" : "run"))
    throw input_error("--resume", fmt::format("{} is a {}'s, and {} is {}", path, rf.kind, opts.config_path,
                                              cfg.sweep ? "a sweep" : "a single run"));
  if (const std::string here = this_cpu().id; rf.cpu_id != here)
    throw input_error("--resume", fmt::format("{} was timed on CPU \"{}\", and this is \"{}\": rounds from two "
                                              "machines cannot be paired. Run the config afresh",
                                              path, rf.cpu_id, here));
  if (!fs::exists(dir / "results.json"))
    throw input_error("--resume", fmt::format("{}: no results.json beside it (output.formats must include \"json\" "
                                              "for a run to be resumed)",
                                              dir.string()));
  return rf;
}

// After the reports: resume.json for a run that was interrupted (what --resume continues from),
// none for a finished one.
void settle_resume_file(const fs::path& dir, const config& cfg, bool complete, int64_t point,
                        const rounds_state* state) {
  const fs::path file = dir / resume_file_name;
  if (complete) {
    std::error_code ec;
    fs::remove(file, ec);  // a finished run has nothing to resume
    return;
  }
  resume_file rf;
  rf.config_hash = config_hash_of(cfg.raw);
  rf.cpu_id = this_cpu().id;
  rf.kind = cfg.sweep ? "sweep" : "run";
  rf.point = point;
  rf.has_state = state != nullptr;
  if (state) rf.state = *state;
  write_file_atomic(file, resume_to_json(rf).dump(1) + "\n");
}

// A sweep: every point validated before anything runs, then run in the grid's order; the reports
// are rendered in full before the first file is written.
int run_sweep_command(const config& cfg, const run_command_options& opts, console& out) {
  const std::vector<sweep_point> points = expand_sweep(*cfg.sweep);
  const std::vector<config> configs = checked_sweep_points(cfg, points, detect_device_caps());
  const fs::path dir = !opts.resume.empty() ? fs::path(opts.resume)
                      : opts.out.empty()     ? fs::path(cfg.output.dir)
                                             : fs::path(opts.out);
  // --resume: the finished points are kept from results.json, the interrupted one goes on.
  std::optional<resume_file> resumed;
  sweep_result prior;
  if (!opts.resume.empty()) {
    resumed = open_resume(cfg, opts);
    const auto results = read_json_file(dir / "results.json");  // its errors name the file
    try {
      prior = sweep_result_from_json(results);
    } catch (const input_error& e) {
      throw input_error("--resume", fmt::format("{}: {}", (dir / "results.json").string(), e.what()));
    }
    if (prior.complete)
      throw input_error("--resume", fmt::format("{} holds a finished sweep: nothing to resume", dir.string()));
    const auto point = static_cast<size_t>(resumed->point);
    if (point > points.size() || point > prior.points.size())
      throw input_error("--resume", fmt::format("{} names point {}, but the sweep has {} and results.json {}",
                                                (dir / resume_file_name).string(), point + 1, points.size(),
                                                prior.points.size()));
    for (size_t i = 0; i < point; ++i)
      if (prior.points[i].label() != points[i].label() || !prior.points[i].result.complete)
        throw input_error("--resume", fmt::format("results.json's point {} ({}) is not this sweep's finished point "
                                                  "{} ({})",
                                                  i + 1, prior.points[i].label(), i + 1, points[i].label()));
  }
  const bool force = opts.force || resumed.has_value();
  if (std::count(cfg.output.formats.begin(), cfg.output.formats.end(), "html"))
    throw input_error(opts.formats.empty() ? "output.formats" : "--formats",
                      "html is written for a single run; a sweep's report is report.md with sweep.svg");
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
  std::vector<problem> problems = output_problems(files, force, "output.dir", "--out");
  if (!opts.junit.empty())
    for (auto& p : output_problems({opts.junit}, force, "--junit", "--junit")) problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  sweep_resume sr;
  sr.prior = &prior;
  if (resumed) {
    sr.point = resumed->point;
    sr.state = resumed->has_state ? &resumed->state : nullptr;
    for (int64_t i = 0; i < sr.point; ++i)
      out.info(fmt::format("point {}/{}: {} (kept from the interrupted sweep)", i + 1, points.size(),
                           points[static_cast<size_t>(i)].label()));
  }
  const interrupt_handlers handlers;  // Ctrl-C: stop after the current pass, write what was measured
  run_options ro;
  ro.on_log = [&](const std::string& s) { out.log(s); };
  if (!opts.perturb.empty()) ro.perturb_variant = opts.perturb;
  live_monitor monitor(opts.monitor, cfg.name, std::nullopt);
  watch(ro, monitor, out, resolve_device(cfg.device));
  out.info(fmt::format("attnbench: sweeping {} over {} points on {}", cfg.name, points.size(), cfg.device));
  const sweep_outcome outcome = run_sweep(cfg, points, configs, ro, [&](size_t i, size_t n, const std::string& label) {
    out.finish_progress();
    out.info(fmt::format("point {}/{}: {}{}", i + 1, n, label,
                         resumed && static_cast<int64_t>(i) == sr.point && sr.state
                             ? fmt::format(" (resumed after {} complete rounds)", sr.state->rounds)
                             : ""));
  }, &sr);
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
  {
    // Stopped again before the resumed point went on: its kept rounds still stand.
    const bool kept = sr.state && sr.stopped_point == sr.point && !sr.save_loop.saved;
    settle_resume_file(dir, cfg, outcome.result.complete, sr.stopped_point,
                       sr.save_loop.saved ? &sr.save : kept ? sr.state : nullptr);
  }

  const std::string grid = llama_bench_table(outcome.result);
  for (const auto& p : outcome.result.points) {
    fmt::print("### {}\n\n{}\n", p.label(), markdown_table(p.result));
    for (const auto& v : p.result.variants)
      if (v.status != status_kind::pass) fmt::print("{} {} [{}]: {}\n", to_string(v.status), v.name, p.label(), v.reason);
  }
  if (!grid.empty()) fmt::print("\n### llama-bench table\n\n{}", grid);
  out.info(fmt::format("wrote {} to {}", fmt::join(cfg.output.formats, ", "), dir.string()));
  monitor.finish(metrics_file(dir, std::nullopt));
  if (!outcome.result.complete) {
    out.info(fmt::format("attnbench: incomplete: {} ({} of {} points)", outcome.result.incomplete_reason,
                         outcome.result.points.size(), outcome.result.points_planned));
    out.info(fmt::format("attnbench: to finish it: attnbench run {} --resume {}", opts.config_path, dir.string()));
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
  cmd->add_flag("--save-outputs", opts.save_outputs,
                "Also write each variant's logits (a decoder's generated token ids, as float32) as "
                "outputs/<variant>.npy");
  cmd->add_flag("--profile", opts.profile,
                "Also profile every variant into <out>/profile, as `attnbench profile` does");
  cmd->add_option("--junit", opts.junit, "Also write a JUnit XML report: one test case per variant check");
  cmd->add_option("--formats", opts.formats,
                  "Report formats, comma-separated, instead of the config's output.formats: json, csv, md, html "
                  "(report.html: one self-contained page with charts), svg");
  cmd->add_flag("-q,--quiet", opts.quiet, "Print only the table and errors");
  cmd->add_flag("-v,--verbose", opts.verbose, "Print each step on stderr");
  add_monitor_options(*cmd, opts.monitor, /*tensorboard=*/true);
  cmd->add_option("--resume", opts.resume,
                  "Continue the interrupted run in this directory (its resume.json): same config, finished "
                  "variants and sweep points kept, only the missing rounds run");
  cmd->add_flag("--no-cost-check", opts.no_cost_check,
                "Run even when the estimates of memory or run time say this machine cannot (see `validate`)");
}

int run_run(const run_command_options& opts) {
  const auto env = rank_env_from_process();
  const bool rank0 = !env || env->rank == 0;
  // Ranks other than 0 write nothing and print only errors: rank 0 reports for all.
  console out(opts.quiet || !rank0 ? verbosity::quiet : opts.verbose ? verbosity::verbose : verbosity::normal);
  config cfg = load_checked_config(opts.config_path, detect_device_caps());
  if (!opts.formats.empty()) cfg.output.formats = split_formats(opts.formats, "--formats");
  if (!opts.no_cost_check) check_cost(cfg);
  if (env) check_multi_process(cfg, *env, opts);
  if (!opts.perturb.empty() && !find_variant(cfg, opts.perturb))
    throw input_error("--test-perturb-outputs", fmt::format("no variant named \"{}\"", opts.perturb));
  if (!opts.perturb.empty() && opts.perturb == cfg.baseline)
    throw input_error("--test-perturb-outputs",
                      fmt::format("\"{}\" is the baseline: every other variant is checked against it, so perturbing it "
                                  "would fail them instead; name another variant",
                                  opts.perturb));
  if (cfg.sweep && opts.profile)
    throw input_error("--profile", "not available with a sweep: profile a point with `attnbench profile` on a config "
                                   "without the sweep block");
  if (!opts.resume.empty() && env)
    throw input_error("--resume", "a multi-process run cannot be resumed: its ranks time their rounds together; "
                                  "run it afresh");
  if (cfg.sweep) return run_sweep_command(cfg, opts, out);
  std::optional<resume_file> resumed;
  run_result prior;
  if (!opts.resume.empty()) {
    resumed = open_resume(cfg, opts);
    prior = load_run_result(fs::path(opts.resume) / "results.json");
    if (prior.complete)
      throw input_error("--resume", fmt::format("{} holds a finished run: nothing to resume", opts.resume));
  }
  const bool force = opts.force || resumed.has_value();
  const fs::path dir = resumed ? fs::path(opts.resume) : opts.out.empty() ? fs::path(cfg.output.dir) : fs::path(opts.out);
  const auto writers = make_writers(cfg.output.formats);
  std::vector<fs::path> files;
  for (const auto& w : writers) files.push_back(dir / w->file_name());
  if (opts.save_outputs)
    for (const auto& v : cfg.variants)
      if (!v.pending) files.push_back(outputs_file(dir, v.name));
  if (opts.monitor.enabled()) files.push_back(metrics_file(dir, std::nullopt));
  std::vector<problem> problems = rank0 ? output_problems(files, force, "output.dir", "--out")
                                        : std::vector<problem>{};
  if (!opts.junit.empty() && rank0)
    for (auto& p : output_problems({opts.junit}, force, "--junit", "--junit"))
      problems.push_back(std::move(p));
  if (opts.profile)
    for (auto& p : profile_output_problems(dir / "profile", default_profile_variants(cfg), force,
                                           "output.dir", "--out"))
      problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  const interrupt_handlers handlers;  // Ctrl-C: stop after the current pass, write what was measured
  run_options ro;
  ro.on_log = [&](const std::string& s) { out.log(s); };
  if (!opts.perturb.empty()) ro.perturb_variant = opts.perturb;
  rounds_state saved;
  loop_resume lr;
  lr.from = resumed && resumed->has_state ? &resumed->state : nullptr;
  lr.prior = resumed ? &prior : nullptr;
  lr.save = &saved;
  if (!env) ro.resume = &lr;  // a single process: what an interruption leaves can be resumed
  if (resumed)
    out.info(fmt::format("attnbench: resuming {} in {}: {} complete round{} kept", cfg.name, dir.string(),
                         lr.from ? lr.from->rounds : 0, lr.from && lr.from->rounds == 1 ? "" : "s"));
  live_monitor monitor(opts.monitor, cfg.name, env ? std::optional<int>(env->rank) : std::nullopt);
  // This process's device: a rank of a GPU run uses cuda:LOCAL_RANK, made current before the
  // process group exists (NCCL binds its communicator to it) and for everything after.
  const torch::Device device = process_device(resolve_device(cfg.device),
                                              env ? std::optional<int>(env->local_rank) : std::nullopt,
                                              static_cast<int>(torch::cuda::device_count()));
  const c10::OptionalDeviceGuard device_guard(device.is_cuda() ? std::optional<c10::Device>(device) : std::nullopt);
  watch(ro, monitor, out, device);
  std::unique_ptr<distributed_world> world;
  if (env) {
    world = std::make_unique<distributed_world>(*env, cfg.distributed, device);
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

  write_reports(outcome.result, writers, dir, force);
  if (!env) settle_resume_file(dir, cfg, outcome.result.complete, 0, lr.saved ? &saved : lr.from);
  if (opts.save_outputs) {
    fs::create_directories(dir / "outputs");
    for (const auto& [name, t] : outcome.outputs) save_outputs(outputs_file(dir, name), t);
  }

  if (!opts.junit.empty()) write_output_file(opts.junit, junit_xml(junit_suite_of(outcome.result)));
  if (opts.profile && outcome.result.complete) {
    out.info("profiling every variant");
    profile_experiment(cfg, default_profile_variants(cfg), dir / "profile", force,
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
    if (!env) out.info(fmt::format("attnbench: to finish it: attnbench run {} --resume {}", opts.config_path, dir.string()));
    return interrupted_exit_status(interrupt_signal());
  }
  return run_exit_status(outcome.result.all_passed(), outcome.result.any_limit_hit());
}

}  // namespace attnbench
