#include "cli/run_command.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/console.hpp"
#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "profile/profile_outputs.hpp"
#include "profile/profile_runner.hpp"
#include "report/file_output.hpp"
#include "report/junit_writer.hpp"
#include "report/make_writers.hpp"
#include "report/markdown_writer.hpp"
#include "report/npy_writer.hpp"
#include "runner/device.hpp"
#include "runner/runner.hpp"

namespace fs = std::filesystem;

namespace attnbench {
namespace {

// Output files of --save-outputs: outputs/<variant>.npy, the name reduced to safe characters.
fs::path outputs_file(const fs::path& dir, const std::string& variant) {
  std::string safe = variant;
  std::replace_if(safe.begin(), safe.end(), [](char c) { return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'); }, '_');
  return dir / "outputs" / (safe + ".npy");
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
  // Test-only: perturbs one variant's outputs so the suite can prove a mismatch is caught.
  cmd->add_option("--test-perturb-outputs", opts.perturb)->group("");
}

int run_run(const run_command_options& opts) {
  console out(opts.quiet ? verbosity::quiet : opts.verbose ? verbosity::verbose : verbosity::normal);
  config cfg = load_config(opts.config_path, detect_device_caps());
  if (!opts.perturb.empty() && !find_variant(cfg, opts.perturb))
    throw input_error("--test-perturb-outputs", fmt::format("no variant named \"{}\"", opts.perturb));
  const fs::path dir = opts.out.empty() ? fs::path(cfg.output.dir) : fs::path(opts.out);
  const auto writers = make_writers(cfg.output.formats);
  std::vector<fs::path> files;
  for (const auto& w : writers) files.push_back(dir / w->file_name());
  if (opts.save_outputs)
    for (const auto& v : cfg.variants)
      if (!v.pending) files.push_back(outputs_file(dir, v.name));
  std::vector<problem> problems = output_problems(files, opts.force, "output.dir", "--out");
  if (!opts.junit.empty())
    for (auto& p : output_problems({opts.junit}, opts.force, "--junit", "--junit"))
      problems.push_back(std::move(p));
  if (opts.profile)
    for (auto& p : profile_output_problems(dir / "profile", default_profile_variants(cfg), opts.force,
                                           "output.dir", "--out"))
      problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  run_options ro;
  ro.on_progress = [&](const progress_event& e) { out.progress(e); };
  ro.on_log = [&](const std::string& s) { out.log(s); };
  if (!opts.perturb.empty()) ro.perturb_variant = opts.perturb;
  out.info(fmt::format("attnbench: running {} ({} variants) on {}", cfg.name, cfg.variants.size(), cfg.device));
  const run_outcome outcome = run_experiment(cfg, ro);
  out.finish_progress();

  write_reports(outcome.result, writers, dir, opts.force);
  if (opts.save_outputs) {
    fs::create_directories(dir / "outputs");
    for (const auto& [name, t] : outcome.outputs) {
      const auto c = t.contiguous();
      write_file_atomic(outputs_file(dir, name), encode_npy_f32(c.data_ptr<float>(), c.sizes().vec()));
    }
  }

  if (!opts.junit.empty()) write_output_file(opts.junit, junit_xml(junit_suite_of(outcome.result)));
  if (opts.profile) {
    out.info("profiling every variant");
    profile_experiment(cfg, default_profile_variants(cfg), dir / "profile", opts.force,
                       [&](const std::string& s) { out.log(s); });
  }

  fmt::print("{}\n", markdown_table(outcome.result));
  if (const std::string server = markdown_server_tables(outcome.result); !server.empty()) fmt::print("{}\n", server);
  for (const auto& v : outcome.result.variants)
    if (v.status != status_kind::pass) fmt::print("{} {}: {}\n", to_string(v.status), v.name, v.reason);
  out.info(fmt::format("wrote {} to {}", fmt::join(cfg.output.formats, ", "), dir.string()));
  return outcome.result.all_passed() ? exit_ok : exit_check_failed;
}

}  // namespace attnbench
