#include "cli/ab_command.hpp"

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "check/output_check.hpp"
#include "cli/compare_command.hpp"
#include "cli/console.hpp"
#include "cli/serve_client.hpp"
#include "cli/serve_command.hpp"
#include "cli/serve_protocol.hpp"
#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "core/device.hpp"
#include "report/ab_report.hpp"
#include "report/file_output.hpp"
#include "runner/config_checks.hpp"
#include "runner/measurement_loop.hpp"
#include "runner/resume_state.hpp"
#include "runner/serve_experiment.hpp"
#include "techniques/amp_choice.hpp"
#include "techniques/variant_plan.hpp"

namespace fs = std::filesystem;

namespace attnbench {
namespace {

namespace sp = serve_protocol;

constexpr int json_indent = 2;
constexpr double percent = 100.0;

// A temporary directory for the check-pass outputs the children hand over, removed on the way out.
class scratch_dir {
 public:
  scratch_dir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = (fs::path(tmp && *tmp ? tmp : "/tmp") / "attnbench-ab.XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error("cannot create a temporary directory in " + templ);
    path_ = templ;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

double parse_double(const std::string& s, const std::string& what) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw std::runtime_error(fmt::format("bad {} \"{}\" in a serve reply", what, s));
  return v;
}

torch::Tensor read_outputs(const fs::path& file, int64_t rows, int64_t cols) {
  std::ifstream in(file, std::ios::binary);
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!in || in.gcount() != static_cast<std::streamsize>(values.size() * sizeof(float)))
    throw std::runtime_error(fmt::format("{}: expected {}×{} float32 outputs", file.string(), rows, cols));
  return torch::from_blob(values.data(), {rows, cols}, torch::kFloat).clone();
}

// One variant of the config as a two-variant run: index 0 is the base build's child, 1 the
// candidate's. Every pass runs in the child, timed by its clock; this side only sequences them,
// so the measurement core's rounds, stopping rule, statistics and check apply unchanged.
class pair_scenario : public scenario_base {
 public:
  pair_scenario(std::array<serve_client*, 2> sides, std::size_t variant, const config& pair_cfg, fs::path scratch)
      : sides_(sides), variant_(variant), cfg_(pair_cfg), scratch_(std::move(scratch)) {}

  std::optional<skip_verdict> skip_reason(std::size_t i, variant_result& /*r*/) override {
    // The child prepares here: a skip is only known once it tried. Its error waits for prepare(),
    // which the loop guards (the variant FAILs, the run goes on).
    const auto reply = sides_[i]->request(fmt::format("prepare {}", variant_));
    if (reply[0] == "skip") return skip_verdict{sp::words_from(reply, 1), sp::words_from(reply, 1)};
    if (reply[0] == "fail") {
      errors_[i] = sp::words_from(reply, 1);
    } else if (reply[0] == "ok" && reply.size() == 3) {
      flops_[i] = parse_double(reply[1], "FLOP count");
      batches_[i] = static_cast<int64_t>(parse_double(reply[2], "batch count"));
    } else {
      errors_[i] = "unexpected reply to prepare: " + sp::words_from(reply, 0);
    }
    return std::nullopt;
  }

  void prepare(std::size_t i, variant_result& r) override {
    if (!errors_[i].empty()) throw std::runtime_error(errors_[i]);
    r.flops_per_pass = flops_[i];
    r.batches = batches_[i];
    r.description = fmt::format("{} build: {}", i == 0 ? "base" : "candidate", sides_[i]->binary());
  }

  void check_pass(std::size_t i, variant_result& /*r*/) override {
    const fs::path file = scratch_ / fmt::format("{}-{}.f32", i == 0 ? "base" : "candidate", variant_);
    const auto reply = sides_[i]->request(fmt::format("check {} {}", variant_, file.string()));
    if (reply[0] != "ok" || reply.size() != 3) throw std::runtime_error(sp::words_from(reply, 1));
    outputs_[i] = read_outputs(file, static_cast<int64_t>(parse_double(reply[1], "row count")),
                               static_cast<int64_t>(parse_double(reply[2], "column count")));
  }

  pass_timing pass(std::size_t i, pass_phase phase) override {
    const auto reply =
        sides_[i]->request(fmt::format("pass {} {}", variant_, phase == pass_phase::timed ? "timed" : "warmup"));
    if (reply[0] != "ok" || reply.size() < 2) throw std::runtime_error(sp::words_from(reply, 1));
    pass_timing t;
    t.seconds = parse_double(reply[1], "pass time");
    for (std::size_t k = 2; k < reply.size(); ++k) t.unit_ms.push_back(parse_double(reply[k], "batch time"));
    return t;
  }

  check_result check(std::size_t i, std::size_t base, double tolerance, variant_result& /*r*/) override {
    const torch::Tensor& out = outputs_[i];
    const torch::Tensor& ref = outputs_[base];
    if (out.sizes() != ref.sizes()) {
      check_result c;
      c.status = status_kind::fail;
      c.message = fmt::format("the builds' outputs have different shapes: base {}, candidate {}",
                              fmt::format("{}×{}", ref.size(0), ref.size(1)), fmt::format("{}×{}", out.size(0), out.size(1)));
      return c;
    }
    return compare_outputs(out, ref, tolerance, output_kind_of(cfg_.model, ref.size(-1)));
  }

 private:
  std::array<serve_client*, 2> sides_;
  std::size_t variant_;
  const config& cfg_;
  fs::path scratch_;
  std::array<std::string, 2> errors_;
  std::array<double, 2> flops_{not_a_number, not_a_number};
  std::array<int64_t, 2> batches_{0, 0};
  std::array<torch::Tensor, 2> outputs_;
};

ab_row failed_row(const std::string& variant, const std::string& why) {
  ab_row row;
  row.variant = variant;
  row.verdict = ab_verdict::fail;
  row.reason = why;
  return row;
}

}  // namespace

void setup_ab(CLI::App& app, ab_command_options& opts) {
  auto* cmd = app.add_subcommand(
      "ab", "Measure two builds in one interleaved run (A B, B A, …); exit 1 when the candidate is slower or wrong");
  cmd->add_option("--base", opts.base, "The reference build's attnbench binary")->required();
  cmd->add_option("--candidate", opts.candidate, "The build to judge, an attnbench binary")->required();
  cmd->add_option("config", opts.config_path, "Experiment config (JSON)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--threshold", opts.threshold,
                  fmt::format("Smallest change of the candidate ÷ base throughput ratio that counts, e.g. 5% or 0.05 "
                              "(default {:g}%)",
                              ab_defaults::threshold * percent));
  cmd->add_option("--out", opts.out, "Also write ab.json and ab.md into this directory");
  cmd->add_option("--junit", opts.junit, "Also write a JUnit XML report: one test case per variant verdict");
  cmd->add_flag("--force", opts.force, "Overwrite ab.json, ab.md or the JUnit file of an earlier ab");
}

int run_ab(const ab_command_options& opts) {
  const double threshold = opts.threshold.empty() ? ab_defaults::threshold : parse_threshold(opts.threshold);
  const config cfg = load_checked_config(opts.config_path, detect_device_caps());
  check_servable(cfg);
  const fs::path out_dir = opts.out;
  std::vector<problem> problems;
  if (!opts.out.empty())
    problems = output_problems({out_dir / "ab.json", out_dir / "ab.md"}, opts.force, "--out", "--out");
  if (!opts.junit.empty())
    for (auto& p : output_problems({opts.junit}, opts.force, "--junit", "--junit")) problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  console out(verbosity::normal);
  const scratch_dir scratch;
  out.info(fmt::format("attnbench ab: starting {} (base) and {} (candidate)", opts.base, opts.candidate));
  serve_client base("--base", opts.base, opts.config_path);
  serve_client candidate("--candidate", opts.candidate, opts.config_path);

  if (cfg.threads > 0) at::set_num_threads(static_cast<int>(cfg.threads));
  run_options env_options;
  env_options.measure_ceilings = false;
  ab_report report;
  report.config_path = opts.config_path;
  report.config_name = cfg.name;
  report.config_hash = config_hash_of(cfg.raw);
  report.base = {opts.base, base.version()};
  report.candidate = {opts.candidate, candidate.version()};
  report.threshold = threshold;
  report.repetition_mode = cfg.measure.adaptive ? "adaptive" : "fixed";
  report.target_rel_half_width = cfg.measure.adaptive ? cfg.measure.target_rel_half_width : not_a_number;
  const torch::Device device = resolve_device(cfg.device);
  report.environment = describe_environment(cfg, device, env_options);
  // The builds' children resolve "amp" on this machine as `run` does; the parent's plans (labels,
  // dtypes, tolerances) follow the same choice.
  config resolved = cfg;
  resolve_amp(resolved, report.environment);

  const bool same_workload = base.variants() == candidate.variants() && base.samples() == candidate.samples() &&
                             base.real_tokens() == candidate.real_tokens() &&
                             base.variants() == static_cast<int64_t>(cfg.variants.size());
  const auto started = pass_clock::now();
  for (std::size_t vi = 0; vi < cfg.variants.size(); ++vi) {
    const variant_config& vc = cfg.variants[vi];
    if (!same_workload) {
      report.rows.push_back(failed_row(
          vc.name, fmt::format("the builds read {} differently: base {} variants, {} samples, {} real tokens; candidate "
                               "{}, {}, {}: they do not compute the same thing",
                               opts.config_path, base.variants(), base.samples(), base.real_tokens(),
                               candidate.variants(), candidate.samples(), candidate.real_tokens())));
      continue;
    }
    out.info(fmt::format("attnbench ab: variant {} ({} of {})", vc.name, vi + 1, cfg.variants.size()));
    config pair = resolved;
    pair.variants = {resolved.variants[vi], resolved.variants[vi]};
    pair.variants[0].name = "base";
    pair.variants[1].name = "candidate";
    pair.baseline = "base";
    pair_scenario scenario({&base, &candidate}, vi, pair, scratch.path());
    run_result res;
    res.name = cfg.name;
    res.baseline = pair.baseline;
    res.environment = report.environment;
    res.workload.samples = base.samples();
    res.workload.real_tokens = base.real_tokens();
    const auto progress = [&](const std::string& phase, const std::string& who, int64_t done, int64_t total) {
      out.progress({phase, vc.name + " " + who, done, total, seconds_since(started)});
    };
    measure_variants(pair, plan_variants(pair, device), scenario, res, progress,
                     [](int64_t /*round*/, bool more) { return more; });
    out.finish_progress();
    report.rows.push_back(ab_row_of(vc.name, res, threshold));
  }

  const std::string markdown = ab_report_markdown(report);
  if (!opts.out.empty()) fs::create_directories(out_dir);
  if (!opts.out.empty())
    write_files_atomic({{out_dir / "ab.json", ab_report_to_json(report).dump(json_indent) + "\n"},
                        {out_dir / "ab.md", markdown}});
  if (!opts.junit.empty()) write_output_file(opts.junit, junit_xml(junit_suite_of(report)));
  fmt::print("{}", markdown);
  return report.regressed() ? exit_regression : exit_ok;
}

}  // namespace attnbench
