#include "runner/runner.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/cuda.h>
#include <unistd.h>

#include "common/build_info.hpp"
#include "common/cpu_info.hpp"
#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/utc_time.hpp"
#include "config/byte_size.hpp"
#include "core/device.hpp"
#include "core/process_device.hpp"
#include "model/decoder.hpp"
#include "model/encoder.hpp"
#include "model/hf_weights.hpp"
#include "model/safetensors.hpp"
#include "model/torchscript_model.hpp"
#include "parallel/distributed_world.hpp"
#include "runner/decision_study.hpp"
#include "runner/generate_scenario.hpp"
#include "runner/matmul_ceiling.hpp"
#include "runner/measurement_loop.hpp"
#include "runner/memory_tracker.hpp"
#include "runner/model_placement.hpp"
#include "runner/offline_scenario.hpp"
#include "runner/resume_state.hpp"
#include "runner/serve_experiment.hpp"
#include "runner/train_scenario.hpp"
#include "techniques/amp_choice.hpp"
#include "techniques/precision.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/dataset.hpp"
#include "workload/workload_checks.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace attnbench {
namespace {

// Sizes of the ceiling GEMM for a dtype the CPU computes on a reference path: 2·256³ = 34 MFLOP,
// ~40 ms at the 0.9 GFLOP/s of a Zen 3's bf16 (1024 would take 2.4 s a repeat).
const std::vector<int64_t> slow_ceiling_sizes{128, 256};

// Caps the bytes the CUDA caching allocator may hold on the run's device ("device_memory_limit":
// its per-process memory fraction of the device's memory) for the run, and lifts the cap after.
// An allocation past the cap fails as running out of memory would (c10::OutOfMemoryError).
class device_memory_cap {
 public:
  device_memory_cap(torch::Device device, int64_t bytes) : device_(device) {
#ifdef ATTNBENCH_WITH_CUDA
    if (bytes <= 0 || !device.is_cuda()) return;
    namespace alloc = c10::cuda::CUDACachingAllocator;
    const auto total = static_cast<double>(at::cuda::getDeviceProperties(device.index())->totalGlobalMem);
    if (static_cast<double>(bytes) > total)
      throw input_error("device_memory_limit", fmt::format("{} bytes is more than {} has ({} bytes)", bytes,
                                                           device.str(), static_cast<int64_t>(total)));
    at::globalContext().lazyInitDevice(at::kCUDA);  // the allocator exists once CUDA is initialised
    alloc::emptyCache();  // blocks cached by earlier work would count against the cap
    saved_ = alloc::getMemoryFraction(device.index());
    alloc::setMemoryFraction(static_cast<double>(bytes) / total, device.index());
    active_ = true;
#else
    (void)bytes;
#endif
  }
  ~device_memory_cap() {
#ifdef ATTNBENCH_WITH_CUDA
    if (!active_) return;
    namespace alloc = c10::cuda::CUDACachingAllocator;
    alloc::setMemoryFraction(saved_, device_.index());
    alloc::emptyCache();
#endif
  }
  device_memory_cap(const device_memory_cap&) = delete;
  device_memory_cap& operator=(const device_memory_cap&) = delete;

 private:
  torch::Device device_;
  bool active_ = false;
  double saved_ = 1.0;
};

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

// What the accuracy check runs on (results.json "check"): the model, its head, the samples and the rule.
check_basis describe_check_basis(const config& cfg, const model_info& m) {
  check_basis b;
  const model_config& mc = cfg.model;
  b.random_weights = mc.torchscript.empty() && mc.weights.empty();
  b.weights = !mc.torchscript.empty() ? "TorchScript " + mc.torchscript
              : b.random_weights      ? fmt::format("random (preset {}, seed {})", mc.preset, mc.seed)
                                      : "checkpoint " + mc.weights;
  b.weight_checksum = m.weight_checksum;
  b.head = mc.family == model_family::gpt2  ? "the LM head (tied to the token embedding)"
           : mc.family == model_family::llama ? "the LM head"
           : mc.mean_pool                  ? "none: mean-pooled embeddings"
           : !mc.torchscript.empty()     ? "the TorchScript module's own"
           : mc.head == head_kind::decisive ? "decisive (fitted on seeded probe inputs)"
           : b.random_weights            ? "random (seeded)"
                                         : "the checkpoint's classifier";
  const workload_config& w = cfg.workload;
  const std::string& file = !w.text.empty() ? w.text : w.file;
  if (file.empty()) {
    b.corpus = "synthetic token ids (seeded lengths and ids)";
  } else {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fnv1a64 h;
    h.update(bytes.data(), bytes.size());
    b.corpus = fmt::format("{} {} (fnv1a64 {}), {}", w.text.empty() ? "token file" : "text", file, h.hex(),
                           w.samples > 0 ? fmt::format("its first {} samples", w.samples) : "every sample");
  }
  b.predictions = prediction_text(mc.mean_pool ? output_kind::embedding : output_kind::logits);
  b.rule = top1_rule_text;
  if (mc.family != model_family::bert) {
    b.predictions = fmt::format("a sequence's {} greedy tokens", cfg.generate.max_new_tokens);
    b.rule = "each changed decision (a step at which the variant chose another token than the baseline after the "
             "same prefix: teacher-forced on the baseline's tokens, and each diverging sequence's first) FAILs the "
             "variant unless the baseline's model in float64 puts it within the noise of the variant's precision "
             "(its margin at most the largest shift over 8 randomly rounded runs, runner/generation_study.hpp); the "
             "teacher-forced logits give the rel. L2 error and are held to the precision's tolerance";
  }
  b.study_runs = study_runs;
  return b;
}

// The results' workload block: the samples as made, and the tokenizer file that made them.
workload_info describe_workload(const config& cfg, const dataset& data) {
  return workload_info{static_cast<int64_t>(data.samples.size()),
                       cfg.workload.max_length,
                       data.description,
                       data.real_tokens(),
                       data.min_length(),
                       data.max_length(),
                       data.mean_length(),
                       data.tokenizer,
                       data.tokenizer_fnv1a64};
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : "unknown";
}

// The measured matmul ceiling of one dtype on `device`: square GEMMs, and the model's own
// products beside them where the dtype runs at speed.
matmul_ceiling measure_ceiling(const environment_info& env, const config& cfg, torch::Device device,
                               const run_options& options, const std::string& name) {
  const torch::ScalarType dtype = scalar_type_of_name(name);
  // A dtype the CPU has no instructions for runs a reference GEMM at ~1 GFLOP/s (a Zen 3's
  // bf16): a smaller GEMM measures the same rate in milliseconds instead of seconds.
  // Its own products beside the squares are too slow to time there, and need no ceiling that fine.
  const bool slow = !device.is_cuda() && slow_dtype_note(this_cpu(), name).has_value();
  std::vector<gemm_shape> shapes = square_shapes(slow ? slow_ceiling_sizes : default_ceiling_sizes(device));
  if (!slow && cfg.model.torchscript.empty() && cfg.model.family == model_family::bert) {
    const auto& base = *std::find_if(cfg.variants.begin(), cfg.variants.end(),
                                     [&](const variant_config& v) { return v.name == cfg.baseline; });
    const int64_t batch = base.batching.batch_size > 0 ? base.batching.batch_size : 8;
    for (auto& g : model_gemm_shapes(cfg.model, batch, cfg.workload.max_length))
      shapes.push_back(std::move(g));
  }
  if (!options.cache) return measure_matmul_ceiling(device, dtype, shapes);
  std::string labels;
  for (const auto& g : shapes) labels += g.label + ",";
  const std::string key = fmt::format("{}|{}|{}|{}", device.str(), env.threads, c10::toString(dtype), labels);
  auto it = options.cache->ceilings.find(key);
  if (it == options.cache->ceilings.end())
    it = options.cache->ceilings.emplace(key, measure_matmul_ceiling(device, dtype, shapes)).first;
  return it->second;
}

}  // namespace

void add_ceilings(environment_info& env, const config& cfg, torch::Device device, const run_options& options,
                  const std::vector<std::string>& dtypes) {
  if (!options.measure_ceilings) return;
  // Measured once each, kept in the order fp32, bf16, fp16 (int8 has no float GEMM ceiling).
  std::vector<matmul_ceiling> kept;
  for (const char* d : {"fp32", "bf16", "fp16"}) {
    const auto have = std::find_if(env.ceilings.begin(), env.ceilings.end(),
                                   [&](const matmul_ceiling& c) { return c.dtype == d; });
    if (have != env.ceilings.end())
      kept.push_back(*have);
    else if (std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end())
      kept.push_back(measure_ceiling(env, cfg, device, options, d));
  }
  env.ceilings = std::move(kept);
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
  const cpu_info cpu = this_cpu();
  env.cpu_id = cpu.id;
  env.cpu_features = cpu.features;
  env.cpu_count = cpu.logical_cpus;
  env.cpu_caches = cpu.caches;
  if (device.is_cuda()) {
    env.gpu_capability = cuda_capability(device);
    env.gpu_driver = cuda_driver_version();
    env.gpu_tensor_core_dtypes = tensor_core_dtypes(env.gpu_capability);
  }
  env.threads = at::get_num_threads();
  env.hostname = host_name();
  env.date = utc_now_iso();
  env.config_path = cfg.source_path;
  env.config_hash = config_hash_of(cfg.raw);
  env.config = cfg.raw;
  // fp32 (the baseline's) and the dtype "amp" considered, whose ceiling backs its decision either
  // way; every other dtype a variant multiplies in is added once the variants are planned.
  std::vector<std::string> dtypes{"fp32"};
  if (any_amp(cfg)) dtypes.push_back(choose_amp(env).considered);
  add_ceilings(env, cfg, device, options, dtypes);
  return env;
}

std::vector<torch::Device> variant_devices(const variant_config& vc, torch::Device device) {
  std::vector<std::string> used;
  if (vc.parallel && vc.parallel->mode == parallel_mode::threads) used = vc.parallel->devices;
  if (vc.pipeline) used.insert(used.end(), vc.pipeline->stages.begin(), vc.pipeline->stages.end());
  std::vector<torch::Device> out{canonical_device(device.str())};
  for (const auto& d : used) {
    const torch::Device c = canonical_device(d);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::optional<std::string> memory_not_covered(const variant_config& vc, torch::Device device) {
  const auto devices = variant_devices(vc, device);
  if (devices.size() == 1) return std::nullopt;
  std::vector<std::string> others;
  for (std::size_t k = 1; k < devices.size(); ++k) others.push_back(devices[k].str());
  return fmt::format("work on {} besides {}: one device's peak would be a part of it (each device's peak is a "
                     "metric of its own)",
                     fmt::join(others, ", "), devices.front().str());
}

namespace {

// run_experiment, or with `serve` set serve_experiment: one set-up for both.
run_outcome run_or_serve(const config& cfg, const run_options& options, const serve_callback* serve) {
  const auto started = pass_clock::now();
  const auto log = [&](const std::string& s) {
    if (options.on_log) options.on_log(s);
  };
  const auto progress = [&](const std::string& phase, const std::string& variant, int64_t done, int64_t total) {
    if (options.on_progress) options.on_progress({phase, variant, done, total, seconds_since(started)});
  };

  // Checks that need the workload come before anything is built or run.
  const dataset data = make_dataset(cfg.workload, cfg.model);
  check_config_against_workload(cfg, data);

  // A rank of a GPU run: cuda:LOCAL_RANK (process_device), not the config's cuda:0.
  const torch::Device device = process_device(
      resolve_device(cfg.device), options.world ? std::optional<int>(options.world->env().local_rank) : std::nullopt,
      static_cast<int>(torch::cuda::device_count()));
  // Every kernel, stream and event of the run belongs to this device, not to device 0.
  const c10::OptionalDeviceGuard device_guard(device.is_cuda() ? std::optional<c10::Device>(device) : std::nullopt);
  if (cfg.threads > 0) at::set_num_threads(static_cast<int>(cfg.threads));
  torch::InferenceMode inference;
  const device_memory_cap memory_cap(device, device_memory_limit(cfg));

  run_outcome outcome;
  run_result& res = outcome.result;
  res.name = cfg.name;
  res.baseline = cfg.baseline;
  res.warmup = cfg.measure.warmup;
  res.scenario = cfg.scenario;
  if (cfg.scenario == "server") res.latency_bound_ms = cfg.server.latency_bound_ms;

  if (cfg.model.family != model_family::bert) {
    if (serve) throw input_error("scenario", "attnbench serve runs the encoder; a decoder runs with \"scenario\": \"generate\" or \"server\"");
    log("building the decoder");
    DecoderLM decoder = build_decoder(cfg.model, [&](const std::string& w) { log("warning: " + w); });
    decoder->to(device);
    const decoder_dims& d = decoder->dims();
    res.model = model_info{model_label(cfg.model), d.layers, d.hidden, d.heads, d.ffn, d.vocab, d.max_positions, 0,
                           parameter_count(*decoder), weight_checksum(*decoder), true, to_string(d.family), d.kv_heads};
    res.check = describe_check_basis(cfg, res.model);
    res.workload = describe_workload(cfg, data);
    log("measuring the matmul ceiling");
    res.environment = describe_environment(cfg, device, options);
    config resolved = cfg;
    resolve_amp(resolved, res.environment);
    std::vector<variant_plan> plans = plan_variants(resolved, device);
    std::vector<std::string> dtypes;
    for (std::size_t i = 0; i < plans.size(); ++i)
      if (!resolved.variants[i].pending) dtypes.push_back(plans[i].precision.dtype);
    add_ceilings(res.environment, cfg, device, options, dtypes);
    generate_scenario generate(resolved, plans, data, decoder, device, res.environment, options.observer);
    if (options.perturb_variant) generate.plant_divergence(*options.perturb_variant);
    if (measure_variants(
            resolved, plans, generate, res, progress, [](int64_t /*round*/, bool more) { return more; },
            options.observer, true, options.resume))
      outcome.outputs = generate.take_outputs();
    return outcome;
  }

  // --- model: one set of weights for every variant ---
  // A TorchScript module, or the built-in encoder with seeded or checkpoint weights.
  EncoderClassifier model{nullptr};
  std::shared_ptr<torchscript_model> scripted;
  // Everything that shapes the weights: a sweep's points share the model. It is built on the host;
  // a variant that runs it whole places it on the device when it is prepared (model_placement).
  const std::string model_key = nlohmann::json(cfg.raw.value("model", nlohmann::ordered_json::object())).dump();
  int64_t model_bytes = -1;
  if (!cfg.model.torchscript.empty()) {
    log("loading the TorchScript model");
    scripted = std::make_shared<torchscript_model>(cfg.model.torchscript);
    res.model = model_info{model_label(cfg.model), cfg.model.layers, cfg.model.hidden, cfg.model.heads, cfg.model.ffn,
                           cfg.model.vocab_size, cfg.model.max_positions, cfg.model.num_labels,
                           scripted->parameter_count(), scripted->weight_checksum(), cfg.model.causal, "bert", cfg.model.heads};
    scripted->to(device);
  } else {
    if (options.cache && options.cache->model && options.cache->model_key == model_key) {
      log("reusing the model of the previous run");
      model = options.cache->model;
      model_bytes = options.cache->model_bytes;
    } else {
      log("building the model");
      if (options.cache) options.cache->model = nullptr;  // free the previous model first
      {
        // On the CPU the host model is the device model: what building it allocates is its size.
        const peak_memory_scope built(torch::kCPU);
        model = EncoderClassifier(cfg.model);
        if (cfg.model.weights.empty()) {
          model->init_weights(cfg.model.seed);
        } else {
          const safetensors_file weights(cfg.model.weights);
          for (const auto& w : load_hf_weights(*model, weights)) log("warning: " + w);
        }
        model_bytes = built.current_bytes();
      }
      model->eval();  // dropout off
      if (options.cache) {
        options.cache->model_key = model_key;
        options.cache->model_bytes = model_bytes;
        ++options.cache->models_built;
      }
    }
    res.model = model_info{model_label(cfg.model), cfg.model.layers, cfg.model.hidden, cfg.model.heads, cfg.model.ffn,
                           cfg.model.vocab_size, cfg.model.max_positions, cfg.model.num_labels,
                           parameter_count(*model), weight_checksum(*model), cfg.model.causal, "bert", cfg.model.heads};
    if (options.cache) options.cache->model = model;
  }

  res.check = describe_check_basis(cfg, res.model);

  // --- workload ---
  res.workload = describe_workload(cfg, data);

  log("measuring the matmul ceiling");
  res.environment = describe_environment(cfg, device, options);
  // "precision": "amp" becomes this device's AMP dtype, or fp32 with the reason.
  config resolved = cfg;
  resolve_amp(resolved, res.environment);
  // Each variant resolved once: everything from here reads its plan (techniques/variant_plan.hpp).
  std::vector<variant_plan> plans = plan_variants(resolved, device);
  std::vector<std::string> dtypes;
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (!resolved.variants[i].pending) dtypes.push_back(plans[i].precision.dtype);
  add_ceilings(res.environment, cfg, device, options, dtypes);
  if (resolved.scenario == "train") {
    train_scenario train(resolved, plans, data, device);
    measure_variants(
        resolved, plans, train, res, progress, [](int64_t /*round*/, bool more) { return more; },
        options.observer, true, options.resume);
    return outcome;
  }
  const auto placement = model ? std::make_shared<model_placement>(model, device, model_bytes) : nullptr;
  offline_scenario offline(
      resolved, plans, data,
      {device, placement, scripted, options.world, options.perturb_variant, progress, options.observer});
  if (serve) {
    (*serve)(resolved, offline, res);
    return outcome;
  }
  // Every rank of a multi-process run goes round as often as rank 0 decides: its timings count.
  const auto agree = [&](int64_t round, bool more) {
    return options.world ? options.world->agree(fmt::format("round/{}", round), more) : more;
  };
  if (measure_variants(resolved, plans, offline, res, progress, agree, options.observer,
                       options.world == nullptr, options.resume))
    outcome.outputs = offline.take_outputs();
  if (const int64_t limit = device_memory_limit(cfg); limit > 0 && !device.is_cuda())
    for (auto& v : res.variants)
      v.notes.push_back(fmt::format("device_memory_limit ({} bytes) not applied: it caps a CUDA device's "
                                    "allocator, and this run is on {}",
                                    limit, device.str()));
  return outcome;
}

}  // namespace

run_outcome run_experiment(const config& cfg, const run_options& options) { return run_or_serve(cfg, options, nullptr); }

void serve_experiment(const config& cfg, const run_options& options, const serve_callback& serve) {
  run_or_serve(cfg, options, &serve);
}

}  // namespace attnbench
