#include "profile/profile_runner.hpp"

#include <unistd.h>

#include <chrono>
#include <map>

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/cpu_info.hpp"
#include "common/error.hpp"
#include "config/config_defaults.hpp"
#include "config/profile_config.hpp"
#include "core/device.hpp"
#include "model/decoder.hpp"
#include "model/encoder.hpp"
#include "model/flops.hpp"
#include "profile/kineto_session.hpp"
#include "profile/profile_outputs.hpp"
#include "profile/profile_schedule.hpp"
#include "report/file_output.hpp"
#include "runner/executor_base.hpp"
#include "runner/generate_scenario.hpp"
#include "techniques/amp_choice.hpp"
#include "techniques/precision.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/batching_base.hpp"
#include "workload/workload_checks.hpp"

namespace fs = std::filesystem;

namespace attnbench {
namespace {

constexpr const char* decoder_breakdown_note =
    "No attention breakdown: the decoder records no labelled regions (model/decoder.cpp), so a decoder's profile "
    "is the operator table of its decode steps, per variant.";

std::string worker_name() {
  char host[256] = {};
  const std::string h = gethostname(host, sizeof host - 1) == 0 ? std::string(host) : "host";
  return fmt::format("{}_{}", h, ::getpid());
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void remove_old_traces(const fs::path& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return;
  for (const auto& entry : fs::directory_iterator(run_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".pt.trace.json") != std::string::npos) fs::remove(entry.path());
  }
}

// Runs the schedule's steps, each inside the step marker torch.profiler's step() records
// (TensorBoard's step views need it), saves each cycle's trace into the TensorBoard run directory
// and as the variant's trace.json, and returns every recorded event of every cycle.
std::vector<trace_event> record_schedule(profiled_variant& pv, kineto_session& session, const profile_schedule& schedule,
                                         const fs::path& run_dir, const fs::path& vdir,
                                         const std::function<void(int64_t)>& run_step) {
  const std::string worker = worker_name();
  std::vector<trace_event> events;
  for (int64_t step = 0; step < schedule.total_steps(); ++step) {
    const profiler_transition t = schedule.transition(step);
    if (t.prepare) session.prepare();
    if (t.enable) session.enable();
    {
      const std::string label = fmt::format("ProfilerStep#{}", step);
      RECORD_USER_SCOPE(label);
      run_step(step);
    }
    if (session.recording()) ++pv.recorded_steps;
    if (t.disable) {
      profiled_cycle cycle = session.disable();
      ++pv.cycles;
      // Timestamps of one process's cycles differ by at least the cycle's own length.
      const fs::path trace = run_dir / tensorboard_trace_name(worker, now_ms() + pv.cycles - 1);
      // Written under a temporary name, then renamed: a full disk leaves no truncated trace.
      const fs::path temp = temporary_path_for(trace);
      cycle.save_trace(temp.string());
      commit_written_file(temp, trace);
      pv.traces.push_back(trace);
      const fs::path copy = vdir / "trace.json", copy_temp = temporary_path_for(copy);
      fs::copy_file(trace, copy_temp, fs::copy_options::overwrite_existing);
      commit_written_file(copy_temp, copy);
      events.insert(events.end(), std::make_move_iterator(cycle.events.begin()),
                    std::make_move_iterator(cycle.events.end()));
    }
  }
  return events;
}

// The variant's profile and TensorBoard run directories, made (earlier traces removed with
// `force`); then one discarded cycle of `warm`: the profiler's first recording in a process (and
// per variant, its first with these kernels) pays set-up costs inside the first ops it records,
// which would inflate whichever variant happens to be profiled first.
std::pair<fs::path, fs::path> start_variant_profile(kineto_session& session, const fs::path& dir, const std::string& name,
                                                    bool force, const std::function<void()>& warm) {
  const fs::path vdir = variant_profile_dir(dir, name);
  const fs::path run_dir = tensorboard_run_dir(dir, name);
  fs::create_directories(vdir);
  if (force) remove_old_traces(run_dir);
  fs::create_directories(run_dir);
  session.prepare();
  session.enable();
  warm();
  session.disable();
  return {vdir, run_dir};
}

// A decoder variant: its first batch of prompts (as the generate scenario batches them, left-padded)
// prefilled outside the recording, then one greedy decode step per schedule step.
profiled_variant profile_decoder_variant(const config& cfg, const variant_config& vc, const DecoderLM& base,
                                         const dataset& data, torch::Device device, const fs::path& dir, bool force) {
  profiled_variant pv;
  pv.name = vc.name;
  const variant_plan plan = plan_variant(cfg, vc, device);
  if (auto why = decoder_skip_reason(vc, plan, device)) {
    pv.skipped = *why;
    return pv;
  }
  if (vc.parallel) {
    pv.skipped = "a profile records one thread's decode steps, and a data-parallel variant runs several workers at "
                 "once: profile it without its parallel block";
    return pv;
  }
  decoder_variant_model m = prepare_decoder_model(base, vc, plan);
  const bool dynamic = vc.batching.kind == "dynamic";
  const int64_t rows = std::min<int64_t>(static_cast<int64_t>(data.samples.size()),
                                         !dynamic && vc.batching.batch_size > 0 ? vc.batching.batch_size : 1);
  int64_t longest = 0;
  for (int64_t r = 0; r < rows; ++r) longest = std::max(longest, static_cast<int64_t>(data.samples[static_cast<std::size_t>(r)].size()));
  auto ids = torch::zeros({rows, longest}, torch::kLong);
  std::vector<int64_t> pad;
  bool any_pad = false;
  for (int64_t r = 0; r < rows; ++r) {
    const auto& sample = data.samples[static_cast<std::size_t>(r)];
    pad.push_back(longest - static_cast<int64_t>(sample.size()));
    any_pad = any_pad || pad.back() > 0;
    std::copy(sample.begin(), sample.end(), ids.data_ptr<int64_t>() + r * longest + pad.back());
  }
  if (!any_pad) pad.clear();
  ids = ids.to(device);

  const profile_config pc = profile_config_of(cfg);
  const profile_schedule schedule(pc);
  const int64_t steps = schedule.total_steps() + 1;  // the discarded cycle's step too
  const decoder_dims& d = m.model->dims();
  if (d.max_positions > 0 && longest + steps > d.max_positions)
    throw input_error("profile", fmt::format("{} decode steps after a {}-token prompt pass the model's max_positions ({}): "
                                             "shorten the profile schedule or the prompts",
                                             steps, longest, d.max_positions));
  const c10::InferenceMode autocast_cache{/*enabled=*/false};  // as the generate scenario runs (generate_scenario.cpp)
  torch::NoGradGuard no_grad;
  const autocast_scope amp(m.autocast, device.type());
  m.model->set_attention(m.how);
  kv_cache cache = make_kv_cache(d, rows, longest + steps, m.cache_dtype, device);
  cache.pad = pad;
  torch::Tensor next = m.model->forward_last(ids, cache).argmax(-1);
  const auto step_once = [&] {
    next = m.model->forward_last(next.unsqueeze(1), cache).argmax(-1);
    synchronize(device);
  };
  kineto_session session(pc, device.is_cuda());
  const auto [vdir, run_dir] = start_variant_profile(session, dir, vc.name, force, step_once);
  std::vector<double> recorded_ms;
  int64_t first_recorded = -1, last_recorded = -1;  // context lengths (cache + the new token) of recorded steps
  const std::vector<trace_event> events = record_schedule(pv, session, schedule, run_dir, vdir, [&](int64_t) {
    const bool recording = session.recording();
    if (recording) {
      if (first_recorded < 0) first_recorded = cache.length + 1;
      last_recorded = cache.length + 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    step_once();
    if (recording) recorded_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  });
  double sum = 0;
  for (double ms : recorded_ms) sum += ms;
  pv.step_ms = recorded_ms.empty() ? 0 : sum / static_cast<double>(recorded_ms.size());
  pv.steps = fmt::format("decode steps of {} sequence(s) after a {}-token prompt{} (prefill not recorded), recorded at "
                         "contexts {} to {} tokens; KV cache in {}",
                         rows, longest, pad.empty() ? "" : " (left-padded)", first_recorded, last_recorded,
                         dtype_name(m.cache_dtype));
  pv.operators = make_operator_table(events, pc.top);
  write_files_atomic({{vdir / "operators.md", operator_table_markdown(pv.operators)},
                      {vdir / "operators.csv", operator_table_csv(pv.operators)}});
  return pv;
}

// Runs one variant through the schedule; returns every recorded event of every cycle.
profiled_variant profile_variant(const config& cfg, const variant_config& vc, EncoderClassifier& model,
                                 const dataset& data, torch::Device device, const fs::path& dir, bool force) {
  profiled_variant pv;
  pv.name = vc.name;
  // Planned with the default per-batch overhead (no calibration): a cost-planned run's batches
  // may differ where its fitted overhead does.
  const batch_cost_model cost = batch_cost_model_of(cfg.model, defaults::planner_batch_overhead_tokens);
  const auto plans = make_batching(vc.batching, cfg.workload.max_length, cost)->plan(data, [&] {
    std::vector<int64_t> rows(data.samples.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
    return rows;
  }());
  std::vector<batch> batches;
  input_assembler assemble(data, device, /*pool=*/false);
  for (const auto& p : plans) batches.push_back(assemble.assemble(p));
  const auto executor = make_executor(model, device, vc, plan_variant(cfg, vc, device), cfg.model.causal);

  const profile_config pc = profile_config_of(cfg);
  const profile_schedule schedule(pc);
  kineto_session session(pc, device.is_cuda());
  const auto [vdir, run_dir] = start_variant_profile(session, dir, vc.name, force, [&] {
    executor->forward(batches.front());
    synchronize(device);
  });

  const std::vector<trace_event> events = record_schedule(pv, session, schedule, run_dir, vdir, [&](int64_t step) {
    executor->forward(batches[static_cast<std::size_t>(step) % batches.size()]);
    synchronize(device);
  });
  pv.operators = make_operator_table(events, pc.top);
  pv.breakdown = make_region_breakdown(vc.name, events, device.is_cuda());
  pv.breakdown.memory_recorded = pc.profile_memory;
  // Per padded length: the steps' events, grouped by the length of the batch each step ran.
  std::map<int64_t, std::vector<trace_event>> by_length;
  for (auto& [step, step_events] : events_by_step(events)) {
    auto& group = by_length[batches[static_cast<std::size_t>(step) % batches.size()].padded_length];
    group.insert(group.end(), step_events.begin(), step_events.end());
  }
  if (by_length.size() > 1)
    for (const auto& [seq, group] : by_length) {
      pv.by_length.push_back(make_region_breakdown(vc.name, group, device.is_cuda()));
      pv.by_length.back().seq = seq;
      pv.by_length.back().memory_recorded = pc.profile_memory;
    }
  write_files_atomic({{vdir / "operators.md", operator_table_markdown(pv.operators)},
                      {vdir / "operators.csv", operator_table_csv(pv.operators)}});
  return pv;
}

}  // namespace

std::vector<std::string> default_profile_variants(const config& cfg) {
  std::vector<std::string> out;
  for (const auto& v : cfg.variants)
    if (!v.pending) out.push_back(v.name);
  return out;
}

void check_profile_variants(const config& cfg, const std::vector<std::string>& names,
                            const std::string& where) {
  std::vector<problem> problems;
  const auto known = default_profile_variants(cfg);
  for (const auto& n : names) {
    const variant_config* v = find_variant(cfg, n);
    if (!v)
      problems.push_back(
          {where, fmt::format("no variant named \"{}\"; variants are: {}", n, fmt::join(known, ", "))});
    else if (v->pending)
      problems.push_back({where, fmt::format("variant \"{}\" is pending and cannot run", n)});
  }
  if (!problems.empty()) throw input_error(std::move(problems));
}

profile_outcome profile_experiment(const config& cfg, const std::vector<std::string>& variants,
                                   const fs::path& dir, bool force,
                                   const std::function<void(const std::string&)>& log) {
  const dataset data = make_dataset(cfg.workload, cfg.model);
  check_config_against_workload(cfg, data);
  const torch::Device device = resolve_device(cfg.device);
  const c10::OptionalDeviceGuard device_guard(device.is_cuda() ? std::optional<c10::Device>(device)
                                                               : std::nullopt);
  if (cfg.threads > 0) at::set_num_threads(static_cast<int>(cfg.threads));
  torch::InferenceMode inference;

  profile_outcome outcome;
  outcome.device = device.str();
  std::vector<region_breakdown> breakdowns;
  // "precision": "amp" as `run` resolves it (techniques/amp_choice.hpp): from the device's
  // features; no ceilings are measured here, so the reason cites none.
  environment_info env;
  env.device = device.str();
  env.device_name = device_name(device);
  const cpu_info cpu = this_cpu();
  env.cpu_id = cpu.id;
  env.cpu_features = cpu.features;
  env.gpu_capability = cuda_capability(device);
  config resolved = cfg;
  resolve_amp(resolved, env);
  if (cfg.model.family != model_family::bert) {
    if (log) log("building the decoder");
    DecoderLM decoder = build_decoder(cfg.model, [&](const std::string& w) {
      if (log) log("warning: " + w);
    });
    decoder->to(device);
    for (const auto& name : variants) {
      if (log) log(fmt::format("profiling {}", name));
      const variant_config& vc = *find_variant(resolved, name);
      if (!vc.precision_choice.empty() && log) log(fmt::format("{}: {}", name, vc.precision_choice));
      outcome.variants.push_back(profile_decoder_variant(resolved, vc, decoder, data, device, dir, force));
      if (!outcome.variants.back().skipped.empty() && log)
        log(fmt::format("{}: SKIPPED: {}", name, outcome.variants.back().skipped));
    }
    write_files_atomic({{dir / "breakdown.md", decoder_breakdown_note},
                        {dir / "breakdown.csv", region_breakdown_csv({})},
                        {dir / "profile.md", profile_markdown(cfg, outcome)}});
    return outcome;
  }
  // Built on the host; the whole model goes to the device only when a variant runs it whole, so
  // an offload variant profiles with its encoder layers in host memory, as `run` places them.
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  model->eval();
  EncoderClassifier whole{nullptr};

  for (const auto& name : variants) {
    if (log) log(fmt::format("profiling {}", name));
    const variant_config& vc = *find_variant(resolved, name);
    if (!vc.precision_choice.empty() && log) log(fmt::format("{}: {}", name, vc.precision_choice));
    if (!vc.offload && !whole) whole = device.is_cpu() ? model : replicate(model, device);
    profiled_variant pv = profile_variant(resolved, vc, vc.offload ? model : whole, data, device, dir, force);
    breakdowns.push_back(pv.breakdown);
    outcome.variants.push_back(std::move(pv));
  }
  for (const auto& v : outcome.variants)
    breakdowns.insert(breakdowns.end(), v.by_length.begin(), v.by_length.end());
  write_files_atomic({{dir / "breakdown.md", breakdown_markdown(outcome)},
                      {dir / "breakdown.csv", region_breakdown_csv(breakdowns)},
                      {dir / "profile.md", profile_markdown(cfg, outcome)}});
  return outcome;
}

std::string breakdown_markdown(const profile_outcome& outcome) {
  std::vector<region_breakdown> overall, by_length;
  for (const auto& v : outcome.variants) {
    overall.push_back(v.breakdown);
    by_length.insert(by_length.end(), v.by_length.begin(), v.by_length.end());
  }
  std::string out = region_breakdown_markdown(overall);
  if (!by_length.empty())
    out += "\n### By sequence length\n\nThe same, per padded length of the recorded steps' batches.\n\n" +
           attention_by_length_markdown(by_length);
  return out;
}

std::string profile_summary_markdown(const config& cfg, const profile_outcome& outcome) {
  if (cfg.model.family == model_family::bert) return breakdown_markdown(outcome);
  std::string out =
      "| variant | recorded steps | ms per recorded step | top operator (self time) | its share |\n"
      "|---|---:|---:|---|---:|\n";
  for (const auto& v : outcome.variants) {
    if (!v.skipped.empty()) {
      out += fmt::format("| {} | SKIPPED: {} | | | |\n", v.name, v.skipped);
      continue;
    }
    const operator_row* top = v.operators.rows.empty() ? nullptr : &v.operators.rows.front();
    out += fmt::format("| {} | {} | {:.3f} | {} | {} |\n", v.name, v.recorded_steps, v.step_ms,
                       top ? top->name : "n/a (no operator recorded)",
                       top ? fmt::format("{:.1f}%", 100.0 * top->self_share) : "n/a");
  }
  return out;
}

std::string profile_markdown(const config& cfg, const profile_outcome& outcome) {
  const profile_config p = profile_config_of(cfg);
  std::string out = fmt::format("# Profile: {}\n\n", cfg.name);
  if (cfg.model.family != model_family::bert) {
    out += fmt::format(
        "Device {}. Schedule: skip_first {}, then {} cycle(s) of wait {}, warmup {}, active {} (a step is one greedy "
        "decode step of the variant's first batch of prompts against its KV cache; the prompt's prefill is not "
        "recorded). Options: record_shapes {}, profile_memory {}, with_flops {}, with_stack {}.\n\n{}\n\n",
        outcome.device, p.skip_first, p.repeat, p.wait, p.warmup, p.active, p.record_shapes, p.profile_memory,
        p.with_flops, p.with_stack, decoder_breakdown_note);
    for (const auto& v : outcome.variants) {
      if (!v.skipped.empty()) {
        out += fmt::format("## Operators: {}\n\nSKIPPED: {}.\n\n", v.name, v.skipped);
        continue;
      }
      out += fmt::format(
          "## Operators: {}\n\n{} recorded steps in {} cycle(s): {}; {:.3f} ms per recorded step (wall time, the "
          "profiler's overhead included); trace: `{}/trace.json`.\n\n",
          v.name, v.recorded_steps, v.cycles, v.steps, v.step_ms, safe_file_name(v.name));
      out += operator_table_markdown(v.operators) + "\n";
    }
    return out;
  }
  out += fmt::format(
      "Device {}. Schedule: skip_first {}, then {} cycle(s) of wait {}, warmup {}, active {} (a step is one "
      "batch). Options: record_shapes {}, profile_memory {}, with_flops {}, with_stack {}.\n\n",
      outcome.device, p.skip_first, p.repeat, p.wait, p.warmup, p.active, p.record_shapes, p.profile_memory,
      p.with_flops, p.with_stack);
  out +=
      "## Attention breakdown\n\nEach labelled region's share of an encoder layer's time, summed over every "
      "recorded layer; peak = the most memory allocated inside one instance of the region (allocations − "
      "frees"
      " on the profiled thread, from the profiler's memory events";
  out += p.profile_memory ? ")" : "; off: profile_memory is false)";
  out +=
      ". On CUDA a region's time is the host's time between entering and leaving it (kernels run "
      "asynchronously); the operator tables give the kernels' CUDA time.\n\n" +
      breakdown_markdown(outcome) + "\n";
  for (const auto& v : outcome.variants) {
    out += fmt::format("## Operators: {}\n\n{} recorded steps in {} cycle(s); trace: `{}/trace.json`.\n\n",
                       v.name, v.recorded_steps, v.cycles, safe_file_name(v.name));
    out += operator_table_markdown(v.operators) + "\n";
  }
  return out;
}

}  // namespace attnbench
