#include "cli/serve_command.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/serve_protocol.hpp"
#include "common/build_info.hpp"
#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "core/device.hpp"
#include "runner/config_checks.hpp"
#include "runner/measurement_loop.hpp"
#include "runner/offline_scenario.hpp"
#include "runner/serve_experiment.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {
namespace {

namespace sp = serve_protocol;

// Scale of the test-only perturbation: a relative L2 error of 0.1, above every precision's tolerance.
constexpr double perturb_factor = 1.1;

// The protocol's channel: the process's original stdout, kept apart from fd 1, which is pointed
// at stderr so that nothing LibTorch or a library prints can land between two protocol lines.
class reply_channel {
 public:
  reply_channel() {
    std::fflush(stdout);
    const int fd = ::dup(STDOUT_FILENO);
    out_ = fd >= 0 ? ::fdopen(fd, "w") : nullptr;
    if (!out_) throw std::runtime_error("serve: cannot duplicate stdout");
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~reply_channel() { std::fclose(out_); }
  reply_channel(const reply_channel&) = delete;
  reply_channel& operator=(const reply_channel&) = delete;
  void say(const std::string& line) {
    std::fputs(sp::one_line(line).c_str(), out_);
    std::fputc('\n', out_);
    std::fflush(out_);
  }

 private:
  std::FILE* out_ = nullptr;
};

void write_outputs(const std::string& file, const torch::Tensor& outputs) {
  const torch::Tensor t = outputs.to(torch::kCPU, torch::kFloat).contiguous();
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(t.data_ptr<float>()), static_cast<std::streamsize>(t.numel() * sizeof(float)));
  if (!out) throw std::runtime_error(fmt::format("cannot write the check-pass outputs to {}", file));
}

// Answers the parent's requests until `quit` or the end of stdin.
void serve_requests(const config& cfg, offline_scenario& scenario, const run_result& res,
                    const serve_command_options& opts, reply_channel& channel) {
  const std::size_t n = cfg.variants.size();
  channel.say(fmt::format("ready {} {} {}", n, res.workload.samples, res.workload.real_tokens));
  std::vector<variant_result> rows(n);
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto words = sp::split_words(line);
    if (words.empty()) continue;
    const std::string& verb = words[0];
    if (verb == "quit") {
      channel.say("bye");
      return;
    }
    std::size_t i = n;
    if (words.size() >= 2) {
      try {
        i = std::stoul(words[1]);
      } catch (const std::exception&) {
        i = n;
      }
    }
    if (i >= n) {
      channel.say(fmt::format("error no variant {} (the config has {}): {}", words.size() >= 2 ? words[1] : "", n, line));
      continue;
    }
    const variant_config& vc = cfg.variants[i];
    variant_result& r = rows[i];
    try {
      if (verb == "prepare" && words.size() == 2) {
        r = variant_result{};
        r.name = vc.name;
        r.is_baseline = vc.name == cfg.baseline;
        r.precision = scenario.plan(i).precision.label;
        r.compute_dtype = scenario.plan(i).precision.dtype;
        r.attention = to_string(vc.attention);
        if (auto skip = scenario.skip_reason(i, r)) {
          channel.say("skip " + skip->reason);
        } else if (vc.pending) {
          channel.say("skip " + *vc.pending);
        } else {
          scenario.prepare(i, r);
          channel.say(fmt::format("ok {:.17g} {}", r.flops_per_pass, r.batches));
        }
      } else if (verb == "check" && words.size() >= 3) {
        scenario.check_pass(i, r);
        torch::Tensor outputs = scenario.check_outputs(i);
        if (!opts.perturb.empty() && opts.perturb == vc.name) outputs = outputs * perturb_factor;
        write_outputs(sp::words_from(words, 2), outputs);
        channel.say(fmt::format("ok {} {}", outputs.size(0), outputs.dim() > 1 ? outputs.size(1) : 1));
      } else if (verb == "pass" && words.size() == 3 && (words[2] == "warmup" || words[2] == "timed")) {
        const pass_timing t = scenario.pass(i, words[2] == "timed" ? pass_phase::timed : pass_phase::warmup);
        std::string reply = fmt::format("ok {:.17g}", t.seconds);
        for (double ms : t.unit_ms) reply += fmt::format(" {:.17g}", ms);
        channel.say(reply);
      } else {
        channel.say("error not a request of protocol version " + std::to_string(sp::version) + ": " + line);
      }
    } catch (const std::bad_alloc&) {
      channel.say("fail out of memory (the system refused an allocation: std::bad_alloc)");
    } catch (const std::exception& e) {
      channel.say("fail " + error_text(e));
    }
  }
}

}  // namespace

void check_servable(const config& cfg) {
  if (cfg.sweep) throw input_error("sweep", "attnbench ab runs one experiment; take a point of the sweep as its config");
  if (cfg.scenario == "train")
    throw input_error("scenario", "attnbench ab times inference passes (offline, server); \"train\" is not served");
  for (std::size_t i = 0; i < cfg.variants.size(); ++i) {
    const auto& v = cfg.variants[i];
    if (!v.pending && v.parallel && v.parallel->mode == parallel_mode::processes)
      throw input_error(fmt::format("variants[{}].parallel.mode", i),
                        "\"processes\" runs ranks of their own; attnbench ab serves one process per build");
  }
}

void setup_serve(CLI::App& app, serve_command_options& opts) {
  auto* cmd = app.add_subcommand("serve", "Serve single passes to `attnbench ab` over stdin/stdout (internal)");
  cmd->group("");  // hidden: `ab` starts it
  cmd->add_option("config", opts.config_path, "Experiment config (JSON)")->required();
}

int run_serve(const serve_command_options& opts) {
  reply_channel channel;
  channel.say(fmt::format("{} {} {} {}", sp::greeting, sp::version, harness_version(), harness_git_commit()));
  config cfg;
  try {
    cfg = load_checked_config(opts.config_path, detect_device_caps());
    check_servable(cfg);
    if (!opts.perturb.empty() && !find_variant(cfg, opts.perturb))
      throw input_error("--test-perturb-outputs", fmt::format("no variant named \"{}\"", opts.perturb));
  } catch (const input_error& e) {
    channel.say(std::string("error ") + e.what());
    throw;
  }
  run_options ro;
  ro.measure_ceilings = false;  // the parent times nothing against a ceiling; it only adds seconds
  serve_experiment(cfg, ro, [&](const config& resolved, offline_scenario& scenario, run_result& res) {
    serve_requests(resolved, scenario, res, opts, channel);
  });
  return exit_ok;
}

}  // namespace attnbench
