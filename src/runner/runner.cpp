#include "runner/runner.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "check/output_check.hpp"
#include "common/build_info.hpp"
#include "common/hash.hpp"
#include "model/encoder.hpp"
#include "model/flops.hpp"
#include "model/hf_weights.hpp"
#include "model/safetensors.hpp"
#include "model/torchscript_model.hpp"
#include "parallel/data_parallel_executor.hpp"
#include "parallel/distributed_executor.hpp"
#include "parallel/distributed_world.hpp"
#include "core/device.hpp"
#include "runner/executor_base.hpp"
#include "runner/matmul_ceiling.hpp"
#include "runner/memory_tracker.hpp"
#include "runner/pass_statistics.hpp"
#include "runner/server_scenario.hpp"
#include "runner/timed_rounds.hpp"
#include "runner/torchscript_executor.hpp"
#include "runner/train_scenario.hpp"
#include "runner/variant_traits.hpp"
#include "techniques/registry.hpp"
#include "stats/summary.hpp"
#include "techniques/precision.hpp"
#include "core/sdpa_backend_guard.hpp"
#include "workload/batching_base.hpp"
#include "workload/result_cache.hpp"
#include "workload/workload_checks.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;

// Repeats of the matmul-ceiling GEMM; the best one counts.
constexpr int ceiling_repeats = 5;
// Noise added by the test-only perturbation hook, relative to the outputs' scale: far outside
// every precision's tolerance.
constexpr double perturb_scale = 0.5;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// One timed pass: its wall time and each batch's latency.
struct pass_timing {
  double seconds = 0;
  std::vector<double> batch_ms;
  int64_t allocations = 0;  // input buffers the pass allocated
};

// Everything one variant needs to run, prepared before anything is timed.
struct prepared_variant {
  const variant_config* cfg = nullptr;
  variant_result result;
  std::unique_ptr<executor_base> executor;
  std::vector<batch_plan> plans;        // over the rows that are computed (unique ones with a cache)
  std::vector<batch> prebuilt;          // the plans' tensors, unless inputs are assembled per pass
  std::unique_ptr<input_assembler> assembler;
  std::unique_ptr<result_cache> cache;   // per pass: repeats are answered from the first occurrence
  std::vector<int64_t> answered_by;      // sample → the row whose logits answer it (itself when computed)
  torch::Tensor outputs;                 // (N, C) from the untimed check pass
  std::vector<double> pass_s;            // timed passes
  std::vector<double> batch_ms;          // every timed batch
  int64_t timed_allocations = 0;         // input-buffer allocations over the timed passes
  std::vector<int64_t> rank_peak_bytes;  // collective variants: each rank's check-pass peak
  bool runnable = false;
};

// torch::Device("cuda") has index -1, the current device: 0 for a process that set none.
torch::Device normalised(const std::string& name) {
  torch::Device d(name);
  if (d.is_cuda() && !d.has_index()) d.set_index(0);
  return d;
}

// Work done per pass before any batch runs: the cache lookups a serving path would make.
void lookup_pass(prepared_variant& v, const dataset& data) {
  if (!v.cache) return;
  v.cache->clear();
  for (std::size_t i = 0; i < data.samples.size(); ++i)
    v.cache->find_or_insert(data.samples[i], static_cast<int64_t>(i));
}

const batch& batch_for(prepared_variant& v, std::size_t k, batch& scratch) {
  if (!v.prebuilt.empty()) return v.prebuilt[k];
  scratch = v.assembler->assemble(v.plans[k]);
  return scratch;
}

// Times one pass over every batch. On CUDA, per-batch latency comes from events on the current
// stream and the pass from a host clock between two synchronisations; on the CPU the host clock
// is the truth.
pass_timing time_pass(prepared_variant& v, const dataset& data, torch::Device device) {
  if (v.executor->runs_whole_passes()) {
    const auto t0 = clock_type::now();
    lookup_pass(v, data);
    const double lookup_s = seconds_since(t0);
    whole_pass p = v.executor->run_pass(/*keep_outputs=*/false);
    return pass_timing{lookup_s + p.seconds, std::move(p.batch_ms), p.allocations};
  }
  pass_timing t;
  t.batch_ms.reserve(v.plans.size());
  batch scratch;
  const int64_t allocations_before = v.assembler ? v.assembler->allocations() : 0;
  synchronize(device);
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const auto stream = c10::cuda::getCurrentCUDAStream(device.index());
    // Events are created on first record: record each once before the clock starts, so
    // cudaEventCreate is not timed, then record again where they mark the batches.
    std::vector<at::cuda::CUDAEvent> marks(v.plans.size() + 1);
    for (auto& m : marks) m = at::cuda::CUDAEvent(cudaEventDefault);
    for (auto& m : marks) m.record(stream);
    synchronize(device);
    const auto t0 = clock_type::now();
    lookup_pass(v, data);
    marks[0].record(stream);
    for (std::size_t k = 0; k < v.plans.size(); ++k) {
      v.executor->forward(batch_for(v, k, scratch));
      marks[k + 1].record(stream);
    }
    synchronize(device);
    t.seconds = seconds_since(t0);
    for (std::size_t i = 1; i < marks.size(); ++i) t.batch_ms.push_back(marks[i - 1].elapsed_time(marks[i]));
    if (v.assembler) t.allocations = v.assembler->allocations() - allocations_before;
    return t;
  }
#endif
  const auto t0 = clock_type::now();
  lookup_pass(v, data);
  for (std::size_t k = 0; k < v.plans.size(); ++k) {
    const auto tb = clock_type::now();
    v.executor->forward(batch_for(v, k, scratch));
    t.batch_ms.push_back(seconds_since(tb) * 1e3);
  }
  t.seconds = seconds_since(t0);
  if (v.assembler) t.allocations = v.assembler->allocations() - allocations_before;
  return t;
}

// A pass that fails (out of memory, a kernel error) fails its variant, not the run: the variant
// is FAIL with the reason and leaves the rotation; the others go on and every report is written.
std::optional<pass_timing> guarded_pass(prepared_variant& v, const dataset& data, torch::Device device,
                                        const char* phase) {
  try {
    return time_pass(v, data, device);
  } catch (const distributed_error&) {
    throw;  // a lost rank ends the whole run: the other ranks cannot go on without it
  } catch (const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    v.runnable = false;
    v.result.status = status_kind::fail;
    v.result.reason = fmt::format("failed during a {} pass: {}", phase,
                                  c10_error ? c10_error->what_without_backtrace() : e.what());
    v.result.check.status = status_kind::fail;
    v.result.check.message = v.result.reason;
    return std::nullopt;
  }
}

// The untimed check pass: outputs in sample order (repeats answered by the cache), peak memory.
void check_pass(prepared_variant& v, const dataset& data, torch::Device device) {
  const auto n = static_cast<int64_t>(data.samples.size());
  v.outputs = torch::Tensor();  // (N, C), C from the model's first output: logits or an embedding
  const peak_memory_scope memory(device);
  batch scratch;
  lookup_pass(v, data);
  if (v.executor->runs_whole_passes()) {
    const whole_pass p = v.executor->run_pass(/*keep_outputs=*/true);
    v.outputs = torch::zeros({n, p.outputs.size(1)}, torch::kFloat);
    v.outputs.index_copy_(0, torch::tensor(p.sample_index, torch::kLong), p.outputs);
  } else {
    for (std::size_t k = 0; k < v.plans.size(); ++k) {
      const batch& b = batch_for(v, k, scratch);
      auto logits = v.executor->forward(b).to(torch::kCPU);  // (B, C)
      if (!v.outputs.defined()) v.outputs = torch::zeros({n, logits.size(1)}, torch::kFloat);
      v.outputs.index_copy_(0, torch::tensor(b.sample_index, torch::kLong), logits);
    }
  }
  synchronize(device);
  v.result.peak_memory_bytes = memory.peak_bytes();
  v.result.peak_memory_method = memory.method();
  // Repeats take the logits of the row that answered them: the check then sees cached results.
  v.outputs = v.outputs.index_select(0, torch::tensor(v.answered_by, torch::kLong));
}

std::string describe_variant(const variant_config& v, const variant_config& base, const std::string& batching,
                             const std::string& base_batching) {
  if (!v.description.empty()) return v.description;
  if (&v == &base) return "the baseline";
  std::vector<std::string> diffs;
  if (const technique* t = technique_for(v)) {
    diffs.push_back(t->describe(v));
  } else if (precision_label(v) != precision_label(base)) {
    diffs.push_back(fmt::format("precision {} instead of {}", precision_label(v), precision_label(base)));
  }
  if (v.attention != base.attention || v.backend != base.backend) {
    const auto name = [](const variant_config& x) {
      return x.attention == attention_kind::naive ? std::string("naive") : "sdpa(" + to_string(x.backend) + ")";
    };
    diffs.push_back(fmt::format("attention {} instead of {}", name(v), name(base)));
  }
  if (batching != base_batching) diffs.push_back(fmt::format("batching {} instead of {}", batching, base_batching));
  if (v.parallel) {
    const parallel_config& p = *v.parallel;
    const std::string threads =
        p.threads_per_worker > 0 ? fmt::format(" × {} thread{}", p.threads_per_worker, p.threads_per_worker == 1 ? "" : "s") : "";
    diffs.push_back(p.mode == parallel_mode::processes
                        ? fmt::format("data parallel across the ranks of a multi-process run{}", threads)
                        : fmt::format("data parallel over {} worker threads ({}){}", p.devices.size(),
                                      fmt::join(p.devices, ", "), threads));
  }
  if (v.offload)
    diffs.push_back(fmt::format("encoder layers offloaded to host memory{} (prefetch {}{}{})",
                                v.offload->target == "cpu" ? ", streamed into CPU buffers" : "", v.offload->prefetch,
                                v.offload->pinned && v.offload->target != "cpu" ? ", pinned" : "",
                                v.offload->host_in_compute_dtype ? ", host copies in the compute dtype" : ""));
  if (v.pipeline) {
    // "encoder split into 2 pipeline stages (cpu: layers 0-2, cpu: layers 3-5), micro-batches of 4"
    std::vector<std::string> stages;
    for (size_t k = 0; k < v.pipeline->stages.size(); ++k)
      stages.push_back(k < v.pipeline->layers.size()
                           ? fmt::format("{}: {} layer{}", v.pipeline->stages[k], v.pipeline->layers[k],
                                         v.pipeline->layers[k] == 1 ? "" : "s")
                           : v.pipeline->stages[k]);
    diffs.push_back(fmt::format("encoder split into {} pipeline stages ({}{}), micro-batches of {}",
                                v.pipeline->stages.size(), fmt::join(stages, ", "),
                                v.pipeline->layers.empty() ? "; layers balanced by parameter count" : "",
                                v.pipeline->micro_batch));
  }
  return diffs.empty() ? "same settings as the baseline" : fmt::format("{}", fmt::join(diffs, "; "));
}

// How the report names the model: its preset, or the file it was loaded from.
std::string model_label(const model_config& m) {
  const std::string& file = !m.torchscript.empty() ? m.torchscript : m.weights;
  if (file.empty()) return m.preset;
  // The file with its two enclosing folders: enough to tell checkpoints apart, short in a table.
  std::filesystem::path p(file), label = p.filename();
  for (int up = 0; up < 2 && p.has_parent_path() && p.parent_path() != p; ++up) {
    p = p.parent_path();
    if (!p.filename().empty()) label = p.filename() / label;
  }
  return label.string();
}

std::string utc_now_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : "unknown";
}

environment_info describe_environment(const config& cfg, torch::Device device, const run_options& options) {
  environment_info env;
  env.harness_version = harness_version();
  env.git_commit = harness_git_commit();
  env.torch_version = torch_version();
  env.cuda_version = cuda_version();
  env.device = device.str();
  env.device_name = device_name(device);
  env.cpu_model = cpu_model_name();
  env.threads = at::get_num_threads();
  env.hostname = host_name();
  env.date = utc_now_iso();
  env.config_path = cfg.source_path;
  fnv1a64 h;
  h.update(nlohmann::json(cfg.raw).dump());  // nlohmann::json sorts keys: key order does not change the hash
  env.config_hash = "fnv1a64:" + h.hex();
  env.config = cfg.raw;
  if (options.measure_ceilings) {
    const int64_t n = default_ceiling_size(device);
    const auto ceiling = [&](torch::ScalarType dtype) {
      if (!options.cache) return measure_matmul_ceiling(device, dtype, n, ceiling_repeats);
      const std::string key = fmt::format("{}|{}|{}", device.str(), env.threads, c10::toString(dtype));
      auto it = options.cache->ceilings.find(key);
      if (it == options.cache->ceilings.end())
        it = options.cache->ceilings.emplace(key, measure_matmul_ceiling(device, dtype, n, ceiling_repeats)).first;
      return it->second;
    };
    env.ceilings.push_back(ceiling(torch::kFloat));
    for (auto p : {precision_kind::amp_bf16, precision_kind::amp_fp16}) {
      const bool used = std::any_of(cfg.variants.begin(), cfg.variants.end(),
                                    [&](const variant_config& v) { return !v.pending && v.precision == p; });
      if (used) env.ceilings.push_back(ceiling(compute_dtype(p)));
    }
  }
  return env;
}

// The SDPA backend LibTorch picks for this variant's first batch: the inputs' shapes and dtype
// as the model would pass them, under the variant's backend flags.
std::string sdpa_backend_in_use(const EncoderClassifier& model, const batch& b, const variant_config& vc,
                                torch::Device device) {
  const model_config& m = model->config();
  const auto opts = torch::TensorOptions().device(device).dtype(compute_scalar_type(vc));
  auto q = torch::empty({b.input_ids.size(0), m.heads, b.padded_length, m.hidden / m.heads}, opts);  // (B, h, S, d)
  const bool padded = b.real_tokens < b.input_ids.numel();
  const auto mask = make_attention_mask(padded ? b.padding_mask : torch::Tensor(), m.causal, attention_kind::sdpa);
  const sdpa_backend_guard guard(vc.backend, device);
  return sdpa_backend_choice(q, q, q, mask);
}

// The backends LibTorch picks across a variant's batches (padded and unpadded batches can differ:
// flash takes no mask): "flash", or "flash (3 batches), math (5 batches)".
std::string sdpa_backends_in_use(const EncoderClassifier& model, const dataset& data,
                                 const std::vector<batch_plan>& plans, const variant_config& vc, torch::Device device) {
  std::map<std::string, int64_t> count;
  std::map<std::tuple<std::size_t, int64_t, bool>, std::string> by_shape;  // (B, S, padded) → backend
  input_assembler assemble(data, device, /*pool=*/false);
  for (const auto& p : plans) {
    int64_t real = 0;
    for (auto row : p.rows) real += static_cast<int64_t>(data.samples[static_cast<std::size_t>(row)].size());
    const auto key = std::make_tuple(p.rows.size(), p.padded_length, real < p.padded_tokens());
    auto it = by_shape.find(key);
    if (it == by_shape.end()) it = by_shape.emplace(key, sdpa_backend_in_use(model, assemble.assemble(p), vc, device)).first;
    ++count[it->second];
  }
  if (count.size() == 1) return count.begin()->first;
  std::vector<std::string> parts;
  for (const auto& [name, n] : count) parts.push_back(fmt::format("{} ({} batches)", name, n));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::optional<std::string> memory_not_covered(const variant_config& vc, torch::Device device) {
  std::vector<std::string> used;
  if (vc.parallel && vc.parallel->mode == parallel_mode::threads) used = vc.parallel->devices;
  if (vc.pipeline) used.insert(used.end(), vc.pipeline->stages.begin(), vc.pipeline->stages.end());
  const torch::Device measured = normalised(device.str());
  std::vector<std::string> others;
  for (const auto& d : used)
    if (normalised(d) != measured && std::find(others.begin(), others.end(), d) == others.end())
      others.push_back(d);
  if (others.empty()) return std::nullopt;
  return fmt::format("work on {} besides {} is not measured (one device's peak would be a part of it)",
                     fmt::join(others, ", "), device.str());
}

run_outcome run_experiment(const config& cfg, const run_options& options) {
  const auto started = clock_type::now();
  const auto log = [&](const std::string& s) {
    if (options.on_log) options.on_log(s);
  };
  const auto progress = [&](const std::string& phase, const std::string& variant, int64_t done, int64_t total) {
    if (options.on_progress) options.on_progress({phase, variant, done, total, seconds_since(started)});
  };

  // Checks that need the workload come before anything is built or run.
  const dataset data = make_dataset(cfg.workload, cfg.model);
  check_config_against_workload(cfg, data);

  const torch::Device device = resolve_device(cfg.device);
  // Every kernel, stream and event of the run belongs to this device, not to device 0.
  const c10::OptionalDeviceGuard device_guard(device.is_cuda() ? std::optional<c10::Device>(device) : std::nullopt);
  if (cfg.threads > 0) at::set_num_threads(static_cast<int>(cfg.threads));
  torch::InferenceMode inference;

  run_outcome outcome;
  run_result& res = outcome.result;
  res.name = cfg.name;
  res.baseline = cfg.baseline;
  res.warmup = cfg.measure.warmup;
  res.scenario = cfg.scenario;
  if (cfg.scenario == "server") res.latency_bound_ms = cfg.server.latency_bound_ms;

  // --- model: one set of weights for every variant ---
  // A TorchScript module, or the built-in encoder with seeded or checkpoint weights.
  EncoderClassifier model{nullptr};
  std::shared_ptr<torchscript_model> scripted;
  // Everything that shapes the weights, and where they live: a sweep's points share the model.
  const std::string model_key = nlohmann::json(cfg.raw.value("model", nlohmann::ordered_json::object())).dump() +
                                "|" + device.str();
  if (!cfg.model.torchscript.empty()) {
    log("loading the TorchScript model");
    scripted = std::make_shared<torchscript_model>(cfg.model.torchscript);
    res.model = model_info{model_label(cfg.model), cfg.model.layers, cfg.model.hidden, cfg.model.heads, cfg.model.ffn,
                           cfg.model.vocab_size, cfg.model.max_positions, cfg.model.num_labels,
                           scripted->parameter_count(), scripted->weight_checksum(), cfg.model.causal};
    scripted->to(device);
  } else {
    if (options.cache && options.cache->model && options.cache->model_key == model_key) {
      log("reusing the model of the previous run");
      model = options.cache->model;
    } else {
      log("building the model");
      if (options.cache) options.cache->model = nullptr;  // free the previous model first
      model = EncoderClassifier(cfg.model);
      if (cfg.model.weights.empty()) {
        model->init_weights(cfg.model.seed);
      } else {
        const safetensors_file weights(cfg.model.weights);
        for (const auto& w : load_hf_weights(*model, weights)) log("warning: " + w);
      }
      model->eval();  // dropout off
      if (options.cache) {
        options.cache->model_key = model_key;
        ++options.cache->models_built;
      }
    }
    res.model = model_info{model_label(cfg.model), cfg.model.layers, cfg.model.hidden, cfg.model.heads, cfg.model.ffn,
                           cfg.model.vocab_size, cfg.model.max_positions, cfg.model.num_labels,
                           parameter_count(*model), weight_checksum(*model), cfg.model.causal};
    model->to(device);
    if (options.cache) options.cache->model = model;
  }

  // --- workload ---
  const auto n_samples = static_cast<int64_t>(data.samples.size());
  res.workload = workload_info{n_samples, cfg.workload.max_length, data.description, data.real_tokens(),
                               data.min_length(), data.max_length(), data.mean_length()};

  log("measuring the matmul ceiling");
  res.environment = describe_environment(cfg, device, options);
  if (cfg.scenario == "train") {
    run_train_scenario(cfg, data, device, res, progress);
    return outcome;
  }

  // --- prepare every variant: batches, executor, the untimed check pass ---
  const variant_config& base_cfg = *find_variant(cfg, cfg.baseline);
  const std::string base_batching = make_batching(base_cfg.batching, cfg.workload.max_length)->describe();
  std::vector<prepared_variant> variants(cfg.variants.size());
  int64_t done = 0;
  for (std::size_t i = 0; i < cfg.variants.size(); ++i) {
    const variant_config& vc = cfg.variants[i];
    prepared_variant& v = variants[i];
    v.cfg = &vc;
    variant_result& r = v.result;
    r.name = vc.name;
    r.is_baseline = vc.name == cfg.baseline;
    r.precision = precision_label(vc);
    r.attention = to_string(vc.attention);
    r.sdpa_backend = vc.attention == attention_kind::sdpa ? to_string(vc.backend) : "";
    if (scripted) {
      r.attention = "torchscript";  // the module's own attention; the variant's setting does not apply
      r.sdpa_backend = "";
      std::string unsupported;
      if (vc.offload) unsupported = "offload " + torchscript_unsupported("offload");
      if (vc.parallel && unsupported.empty()) unsupported = "parallel " + torchscript_unsupported("parallel");
      if (vc.pipeline && unsupported.empty()) unsupported = "pipeline " + torchscript_unsupported("pipeline");
      if (vc.checkpointing.policy != checkpoint_policy::none && unsupported.empty())
        unsupported = "checkpointing " + torchscript_unsupported("checkpointing");
      for (const auto& [key, block] : vc.techniques)
        if (auto why = torchscript_unsupported(key, block); !why.empty() && unsupported.empty())
          unsupported = fmt::format("{} {}", key, why);
      if (!unsupported.empty()) {
        r.status = status_kind::skipped;
        r.reason = unsupported;
        r.description = vc.description.empty() ? "a technique TorchScript models cannot run" : vc.description;
        r.check.message = "not run";
        continue;
      }
    }
    if (vc.pending) {
      r.status = status_kind::skipped;
      r.reason = *vc.pending;
      r.description = vc.description.empty() ? "not implemented yet" : vc.description;
      r.check.message = "not run";
      continue;
    }
    if (vc.checkpointing.policy != checkpoint_policy::none)
      r.notes.push_back("no effect in inference: no activations are kept");
    const bool collective = vc.parallel && vc.parallel->mode == parallel_mode::processes;
    if (options.world && options.world->rank() != 0 && !collective) {
      r.status = status_kind::skipped;  // rank 0 runs it alone; this rank's result is not reported
      r.reason = "runs on rank 0";
      continue;
    }
    if (collective && !options.world) {
      r.status = status_kind::skipped;
      r.reason = "runs across processes: start it with `attnbench launch --nproc N` (or torchrun, srun); this is a "
                 "single process";
      r.description = describe_variant(vc, base_cfg, "", "");
      r.check.message = "not run";
      continue;
    }
    if (auto why = executor_skip_reason(vc, device)) {
      r.status = status_kind::skipped;
      r.reason = *why;
      r.description = describe_variant(vc, base_cfg, "", "");
      r.check.message = "not run";
      continue;
    }
    const auto batching = make_batching(vc.batching, cfg.workload.max_length);
    r.batching = batching->describe() + (vc.batching.pool ? " pool" : "") + (vc.batching.cache ? " cache" : "");
    r.description = describe_variant(vc, base_cfg, r.batching, base_batching);
    // Which rows are computed: all, or with a cache only the first occurrence of each sequence.
    std::vector<int64_t> rows;
    v.answered_by.resize(data.samples.size());
    result_cache first_seen;
    for (std::size_t s = 0; s < data.samples.size(); ++s) {
      const auto row = static_cast<int64_t>(s);
      const auto earlier = vc.batching.cache ? first_seen.find_or_insert(data.samples[s], row) : std::nullopt;
      v.answered_by[s] = earlier.value_or(row);
      if (!earlier) rows.push_back(row);
    }
    if (vc.batching.cache) {
      v.cache = std::make_unique<result_cache>();
      r.cache_hit_rate = static_cast<double>(first_seen.hits()) / static_cast<double>(first_seen.lookups());
    }
    if (collective) {
      auto ranks = std::make_unique<distributed_executor>(*options.world, model, device, vc, cfg.model.causal, data,
                                                          rows, *batching, cfg.measure.assemble_inputs);
      v.plans = ranks->plans();
      v.executor = std::move(ranks);
    } else if (vc.parallel) {
      // Workers own their shards' batches and inputs; v.plans lists them all, for the accounting.
      auto parallel = std::make_unique<data_parallel_executor>(model, vc, cfg.model.causal, data, rows, *batching,
                                                               cfg.measure.assemble_inputs);
      v.plans = parallel->plans();
      v.executor = std::move(parallel);
    } else {
      v.plans = batching->plan(data, rows);
      if (cfg.measure.assemble_inputs) {
        v.assembler = std::make_unique<input_assembler>(data, device, vc.batching.pool);
      } else {
        // Built once before timing, each batch in its own tensors (pooled buffers would be shared).
        input_assembler once(data, device, /*pool=*/false);
        for (const auto& p : v.plans) v.prebuilt.push_back(once.assemble(p));
      }
      v.executor = scripted ? std::make_unique<torchscript_executor>(scripted, device, vc)
                            : make_executor(model, device, vc, cfg.model.causal);
    }
    r.batches = static_cast<int64_t>(v.plans.size());
    double flops = 0;
    for (const auto& p : v.plans) {
      for (auto row : p.rows) r.real_tokens += static_cast<int64_t>(data.samples[static_cast<std::size_t>(row)].size());
      r.computed_tokens += p.padded_tokens();
      flops += forward_flops(cfg.model, static_cast<int64_t>(p.rows.size()), p.padded_length);
    }
    r.flops_per_pass = flops;
    r.padding_efficiency = static_cast<double>(r.real_tokens) / static_cast<double>(r.computed_tokens);
    r.mean_batch_size = static_cast<double>(rows.size()) / static_cast<double>(v.plans.size());
    progress("check", vc.name, done++, static_cast<int64_t>(cfg.variants.size()));
    try {
      v.executor->begin_phase(pass_phase::check);
      check_pass(v, data, device);
      if (collective) {
        // Each rank measured its own process; the variant's figure would be one rank's share.
        const auto peaks = options.world->all_gather({static_cast<double>(r.peak_memory_bytes)});
        for (const auto& p : peaks) v.rank_peak_bytes.push_back(static_cast<int64_t>(p[0]));
        r.peak_memory_bytes = -1;
        r.peak_memory_method =
            "n/a: the ranks are separate processes (each rank's own peak is in the parallel table)";
      } else if (auto gap = memory_not_covered(vc, device)) {
        r.peak_memory_bytes = -1;
        r.peak_memory_method = "n/a: " + *gap;
      }
      if (model && vc.attention == attention_kind::sdpa) {
        r.sdpa_backend_used = sdpa_backends_in_use(model, data, v.plans, vc, device);
      }
      v.runnable = true;
    } catch (const distributed_error&) {
      throw;
    } catch (const c10::Error& e) {
      r.status = status_kind::fail;
      r.reason = fmt::format("could not run: {}", e.what_without_backtrace());
      r.check.status = status_kind::fail;
      r.check.message = r.reason;
    }
  }

  // --- warm-up, then timed rounds, interleaved across variants (runner/timed_rounds.hpp) ---
  std::vector<round_member> members;
  std::vector<prepared_variant*> member_of;
  for (auto& v : variants) {
    if (!v.runnable) continue;
    round_member mb;
    mb.name = v.cfg->name;
    mb.is_baseline = v.cfg->name == cfg.baseline;
    prepared_variant* pv = &v;
    mb.pass = [pv, &data, device](pass_phase phase) -> std::optional<double> {
      pv->executor->begin_phase(phase);
      const auto t = guarded_pass(*pv, data, device, phase == pass_phase::timed ? "timed" : "warm-up");
      if (!t) return std::nullopt;
      if (phase == pass_phase::timed) {
        pv->timed_allocations += t->allocations;
        pv->batch_ms.insert(pv->batch_ms.end(), t->batch_ms.begin(), t->batch_ms.end());
      }
      return t->seconds;
    };
    members.push_back(std::move(mb));
    member_of.push_back(pv);
  }
  // Every rank of a multi-process run goes round as often as rank 0 decides: its timings count.
  const rounds_outcome rounds = run_rounds(cfg.measure, members, progress, [&](int64_t round, bool more) {
    return options.world ? options.world->agree(fmt::format("round/{}", round), more) : more;
  });
  for (std::size_t i = 0; i < members.size(); ++i) member_of[i]->pass_s = std::move(members[i].pass_s);
  for (auto& v : variants)
    if (v.executor) v.executor->begin_phase(pass_phase::other);
  // Ranks other than 0 stay until rank 0 has everything it needs from them.
  if (options.world) options.world->meet("end-of-passes");
  // Rank 0 reports for everyone: the others have no baseline to compare with.
  if (options.world && options.world->rank() != 0) return outcome;

  // --- statistics and the output check ---
  prepared_variant& base = *std::find_if(variants.begin(), variants.end(),
                                         [&](const prepared_variant& v) { return v.cfg->name == cfg.baseline; });
  const std::vector<double> base_throughput = per_second(base.pass_s, static_cast<double>(n_samples));
  for (auto& v : variants) {
    variant_result& r = v.result;
    if (v.runnable) {
      // Tokens served, repeats included.
      summarize_passes(r, v.pass_s, static_cast<double>(n_samples), static_cast<double>(res.workload.real_tokens),
                       base_throughput, base.runnable);
      if (cfg.measure.assemble_inputs && !v.pass_s.empty())
        r.allocations_per_batch = static_cast<double>(v.timed_allocations) /
                                  static_cast<double>(v.pass_s.size() * v.plans.size());
      r.latency_ms = latency_summary{percentile(v.batch_ms, 50), percentile(v.batch_ms, 90), percentile(v.batch_ms, 99)};
      r.achieved_gflops = r.flops_per_pass * r.throughput.geomean / static_cast<double>(n_samples) / 1e9;
      r.ceiling_share = r.achieved_gflops / ceiling_for(res.environment, *v.cfg);
      if (options.perturb_variant && *options.perturb_variant == r.name) {
        auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/7);
        const double scale = v.outputs.abs().max().item<double>() * perturb_scale;
        v.outputs = v.outputs + at::randn(v.outputs.sizes(), gen, v.outputs.options()) * scale;
      }
      const double tol = tolerance_for(cfg, *v.cfg);
      if (!base.runnable) {
        r.check.status = status_kind::fail;
        r.check.message = "the baseline could not run, so nothing can be checked";
      } else {
        r.check = compare_outputs(v.outputs, base.outputs, tol, output_kind_of(cfg.model, base.outputs.size(-1)));
      }
      r.status = r.check.status;
      if (r.status == status_kind::fail) r.reason = r.check.message;
      v.executor->annotate(r);
      for (std::size_t k = 0; k < v.rank_peak_bytes.size() && k < r.parallel.workers.size(); ++k)
        r.parallel.workers[k].peak_memory_bytes = v.rank_peak_bytes[k];
      outcome.outputs[r.name] = v.outputs;
      if (cfg.scenario == "server" && base.runnable) {
        server_sweep sweep;
        try {
          sweep = run_server_sweep(cfg, data, *v.cfg, *v.executor, device, base.outputs,
                                   [&](const std::string& what, int64_t k, int64_t n) { progress("server", what, k, n); });
        } catch (const std::exception& e) {
          const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
          sweep.check.status = status_kind::fail;
          sweep.check.message = fmt::format("failed: {}", c10_error ? c10_error->what_without_backtrace() : e.what());
        }
        r.server = sweep.points;
        r.max_sustainable_rate = sweep.max_sustainable_rate;
        if (sweep.check.status == status_kind::fail && r.status != status_kind::fail) {
          r.status = status_kind::fail;
          r.check = sweep.check;
          r.reason = "server scenario: " + sweep.check.message;
        }
      }
    }
    res.variants.push_back(std::move(r));
  }
  record_repetitions(cfg.measure, rounds, res);
  return outcome;
}

}  // namespace attnbench
