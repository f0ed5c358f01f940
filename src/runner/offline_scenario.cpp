#include "runner/offline_scenario.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/output_check.hpp"
#include "common/precision_classes.hpp"
#include "core/device.hpp"
#include "core/sdpa_backend_guard.hpp"
#include "kernels/kernel_catalog.hpp"
#include "model/attention.hpp"
#include "model/attention_impls.hpp"
#include "model/flops.hpp"
#include "model/torchscript_model.hpp"
#include "parallel/data_parallel_executor.hpp"
#include "parallel/distributed_executor.hpp"
#include "parallel/distributed_world.hpp"
#include "runner/decision_study.hpp"
#include "runner/executor_base.hpp"
#include "runner/memory_tracker.hpp"
#include "runner/runner.hpp"
#include "runner/server_scenario.hpp"
#include "runner/torchscript_executor.hpp"
#include "techniques/plain_executor.hpp"
#include "techniques/precision.hpp"
#include "techniques/registry.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/batching_base.hpp"
#include "workload/result_cache.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace attnbench {

// Everything one variant needs to run, prepared before anything is timed.
struct offline_variant {
  std::unique_ptr<executor_base> executor;
  std::vector<batch_plan> plans;  // over the rows that are computed (unique ones with a cache)
  std::vector<batch> prebuilt;    // the plans' tensors, unless inputs are assembled per pass
  std::unique_ptr<input_assembler> assembler;
  std::unique_ptr<result_cache> cache;  // per pass: repeats are answered from the first occurrence
  std::vector<int64_t> answered_by;     // sample → the row whose logits answer it (itself when computed)
  torch::Tensor outputs;                // (N, C) from the untimed check pass
  int64_t timed_passes = 0;
  int64_t timed_allocations = 0;         // input-buffer allocations over the timed passes
  std::vector<int64_t> rank_peak_bytes;  // collective variants: each rank's check-pass peak
  // Device memory its weights take, measured when they were placed (-1: not measured): the shared
  // whole model's, or what an offload executor allocated for its resident part and slots.
  int64_t device_weight_bytes = -1;
  // Variants on several devices: each device's check-pass peak (the run's device first).
  std::vector<std::pair<torch::Device, int64_t>> device_peaks;
};

namespace {

// Noise added by the test-only perturbation hook, relative to the outputs' scale: far outside
// every precision's tolerance.
constexpr double perturb_scale = 0.5;

#if ATTNBENCH_PLANTED_SLOWDOWN_PERCENT > 0
// Test-only (CMake ATTNBENCH_TEST_PLANTED_SLOWDOWN, never in a release build): after each CPU
// batch, spin for that share of the batch's time, inside the timed region, so a whole pass is that
// much slower. `attnbench ab` and `compare` must catch it (results/cpu-ab-acceptance/).
void planted_slowdown(double batch_s) {
  const auto t0 = pass_clock::now();
  const double extra_s = batch_s * ATTNBENCH_PLANTED_SLOWDOWN_PERCENT / 100.0;
  while (seconds_since(t0) < extra_s) {
  }
}
#endif

// One pass: its timing, and the input buffers it allocated.
struct pass_record {
  pass_timing timing;
  int64_t allocations = 0;
};

// Work done per pass before any batch runs: the cache lookups a serving path would make.
void lookup_pass(offline_variant& v, const dataset& data) {
  if (!v.cache) return;
  v.cache->clear();
  for (std::size_t i = 0; i < data.samples.size(); ++i)
    v.cache->find_or_insert(data.samples[i], static_cast<int64_t>(i));
}

const batch& batch_for(offline_variant& v, std::size_t k, batch& scratch) {
  if (!v.prebuilt.empty()) return v.prebuilt[k];
  scratch = v.assembler->assemble(v.plans[k]);
  return scratch;
}

// Times one pass over every batch. On CUDA, per-batch latency comes from events on the current
// stream and the pass from a host clock between two synchronisations; on the CPU the host clock
// is the truth.
pass_record time_pass(offline_variant& v, const dataset& data, torch::Device device) {
  if (v.executor->runs_whole_passes()) {
    const auto t0 = pass_clock::now();
    lookup_pass(v, data);
    const double lookup_s = seconds_since(t0);
    whole_pass p = v.executor->run_pass(/*keep_outputs=*/false);
    return pass_record{{lookup_s + p.seconds, std::move(p.batch_ms)}, p.allocations};
  }
  pass_record t;
  t.timing.unit_ms.reserve(v.plans.size());
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
    const auto t0 = pass_clock::now();
    lookup_pass(v, data);
    marks[0].record(stream);
    for (std::size_t k = 0; k < v.plans.size(); ++k) {
      v.executor->forward(batch_for(v, k, scratch));
      marks[k + 1].record(stream);
    }
    synchronize(device);
    t.timing.seconds = seconds_since(t0);
    for (std::size_t i = 1; i < marks.size(); ++i)
      t.timing.unit_ms.push_back(marks[i - 1].elapsed_time(marks[i]));
    if (v.assembler) t.allocations = v.assembler->allocations() - allocations_before;
    return t;
  }
#endif
  const auto t0 = pass_clock::now();
  lookup_pass(v, data);
  for (std::size_t k = 0; k < v.plans.size(); ++k) {
    const auto tb = pass_clock::now();
    v.executor->forward(batch_for(v, k, scratch));
#if ATTNBENCH_PLANTED_SLOWDOWN_PERCENT > 0
    planted_slowdown(seconds_since(tb));
#endif
    t.timing.unit_ms.push_back(seconds_since(tb) * 1e3);
  }
  t.timing.seconds = seconds_since(t0);
  if (v.assembler) t.allocations = v.assembler->allocations() - allocations_before;
  return t;
}

// The untimed check pass: outputs in sample order (repeats answered by the cache), peak memory.
void run_check_pass(offline_variant& v, variant_result& r, const dataset& data, torch::Device device,
                    const std::vector<torch::Device>& devices) {
  const auto n = static_cast<int64_t>(data.samples.size());
  v.outputs = torch::Tensor();  // (N, C), C from the model's first output: logits or an embedding
  const peak_memory_scope memory(device, devices);
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
  for (const auto& d : devices) synchronize(d);
  r.peak_memory_bytes = memory.peak_bytes();
  r.peak_memory_method = memory.method();
  v.device_peaks.clear();
  if (devices.size() > 1)
    for (const auto& d : devices) v.device_peaks.emplace_back(d, memory.peak_bytes_on(d));
  // Repeats take the logits of the row that answered them: the check then sees cached results.
  v.outputs = v.outputs.index_select(0, torch::tensor(v.answered_by, torch::kLong));
}

std::string describe_variant(const variant_config& v, const variant_plan& plan, const variant_config& base,
                             const variant_plan& base_plan, const std::string& batching,
                             const std::string& base_batching) {
  if (!v.description.empty()) return v.description;
  if (&v == &base) return "the baseline";
  std::vector<std::string> diffs;
  if (!plan.description.empty()) {
    diffs.push_back(plan.description);
  } else if (plan.precision.label != base_plan.precision.label) {
    diffs.push_back(
        fmt::format("precision {} instead of {}", plan.precision.label, base_plan.precision.label));
  }
  if (v.attention != base.attention || v.backend != base.backend || v.kernel != base.kernel) {
    const auto name = [](const variant_config& x) {
      if (x.attention == attention_kind::custom) return x.kernel.empty() ? std::string("custom") : x.kernel;
      return x.attention == attention_kind::naive ? std::string("naive")
                                                  : "sdpa(" + to_string(x.backend) + ")";
    };
    diffs.push_back(fmt::format("attention {} instead of {}", name(v), name(base)));
  }
  if (batching != base_batching)
    diffs.push_back(fmt::format("batching {} instead of {}", batching, base_batching));
  if (v.parallel) {
    const parallel_config& p = *v.parallel;
    const std::string threads = p.threads_per_worker > 0 ? fmt::format(" × {} thread{}", p.threads_per_worker,
                                                                       p.threads_per_worker == 1 ? "" : "s")
                                                         : "";
    diffs.push_back(p.mode == parallel_mode::processes
                        ? fmt::format("data parallel across the ranks of a multi-process run{}", threads)
                        : fmt::format("data parallel over {} worker threads ({}){}", p.devices.size(),
                                      fmt::join(p.devices, ", "), threads));
  }
  if (v.offload)
    diffs.push_back(
        fmt::format("encoder layers offloaded to host memory{} (prefetch {}{}{})",
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

// The SDPA backend LibTorch picks for this variant's first batch: the inputs' shapes and dtype
// as the model would pass them, under the variant's backend flags.
std::string sdpa_backend_in_use(const EncoderClassifier& model, const batch& b, const variant_config& vc,
                                const variant_plan& plan, torch::Device device) {
  const model_config& m = model->config();
  const auto opts = torch::TensorOptions().device(device).dtype(plan.precision.activations);
  auto q = torch::empty({b.input_ids.size(0), m.heads, b.padded_length, m.hidden / m.heads},
                        opts);  // (B, h, S, d)
  const bool padded = b.real_tokens < b.input_ids.numel();
  const auto mask =
      make_attention_mask(padded ? b.padding_mask : torch::Tensor(), m.causal, attention_kind::sdpa);
  const sdpa_backend_guard guard(vc.backend, device);
  return sdpa_backend_choice(q, q, q, mask);
}

// The backends LibTorch picks across a variant's batches (padded and unpadded batches can differ:
// flash takes no mask): "flash", or "flash (3 batches), math (5 batches)".
std::string sdpa_backends_in_use(const EncoderClassifier& model, const dataset& data,
                                 const std::vector<batch_plan>& plans, const variant_config& vc,
                                 const variant_plan& plan, torch::Device device) {
  std::map<std::string, int64_t> count;
  std::map<std::tuple<std::size_t, int64_t, bool>, std::string> by_shape;  // (B, S, padded) → backend
  input_assembler assemble(data, device, /*pool=*/false);
  for (const auto& p : plans) {
    int64_t real = 0;
    for (auto row : p.rows) real += static_cast<int64_t>(data.samples[static_cast<std::size_t>(row)].size());
    const auto key = std::make_tuple(p.rows.size(), p.padded_length, real < p.padded_tokens());
    auto it = by_shape.find(key);
    if (it == by_shape.end())
      it = by_shape.emplace(key, sdpa_backend_in_use(model, assemble.assemble(p), vc, plan, device)).first;
    ++count[it->second];
  }
  if (count.size() == 1) return count.begin()->first;
  std::vector<std::string> parts;
  for (const auto& [name, n] : count) parts.push_back(fmt::format("{} ({} batches)", name, n));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Why a TorchScript model cannot run the variant, or "": its techniques need the model's layers.
std::string torchscript_skip_reason(const variant_config& vc) {
  if (vc.offload) return "offload " + torchscript_unsupported("offload");
  if (vc.parallel) return "parallel " + torchscript_unsupported("parallel");
  if (vc.pipeline) return "pipeline " + torchscript_unsupported("pipeline");
  if (vc.checkpointing.policy != checkpoint_policy::none)
    return "checkpointing " + torchscript_unsupported("checkpointing");
  for (const auto& [key, block] : vc.techniques)
    if (auto why = torchscript_unsupported(key, block); !why.empty()) return fmt::format("{} {}", key, why);
  return "";
}

// Which rows a pass computes: all, or with a cache only the first occurrence of each sequence
// (v.answered_by then maps each sample to the row that answers it, and r gets the hit rate).
std::vector<int64_t> computed_rows(offline_variant& v, const dataset& data, bool cache, variant_result& r) {
  std::vector<int64_t> rows;
  v.answered_by.resize(data.samples.size());
  result_cache first_seen;
  for (std::size_t s = 0; s < data.samples.size(); ++s) {
    const auto row = static_cast<int64_t>(s);
    const auto earlier = cache ? first_seen.find_or_insert(data.samples[s], row) : std::nullopt;
    v.answered_by[s] = earlier.value_or(row);
    if (!earlier) rows.push_back(row);
  }
  if (cache) {
    v.cache = std::make_unique<result_cache>();
    r.cache_hit_rate = static_cast<double>(first_seen.hits()) / static_cast<double>(first_seen.lookups());
  }
  return rows;
}

// The forward FLOPs of one pass over the variant's batches.
// A custom kernel skips padded keys, so its attention is counted over real keys only: the
// GFLOP/s figure stays the work the hardware did.
double pass_flops(const offline_variant& v, const dataset& data, const model_config& m, bool skips_padded_keys,
                  int64_t pruned_heads) {
  double flops = 0;
  for (const auto& p : v.plans) {
    std::vector<int64_t> lengths;
    for (auto row : p.rows)
      lengths.push_back(static_cast<int64_t>(data.samples[static_cast<std::size_t>(row)].size()));
    flops += skips_padded_keys
                 ? forward_flops_real_keys(m, lengths, p.padded_length, pruned_heads)
                 : forward_flops(m, static_cast<int64_t>(p.rows.size()), p.padded_length, pruned_heads);
  }
  return flops;
}

// The per-pass work of the variant's batches: tokens, padding and forward FLOPs.
// `pruned_heads`: attention heads per layer the variant's executor runs without (the model's
// heads less its plan's, variant_plan::heads); they are not computed, so they do not count, and the share of
// the FLOPs they save is a metric.
void count_work(const offline_variant& v, const dataset& data, const model_config& m, bool skips_padded_keys,
                int64_t pruned_heads, int64_t rows, variant_result& r) {
  r.batches = static_cast<int64_t>(v.plans.size());
  for (const auto& p : v.plans) {
    for (auto row : p.rows) r.real_tokens += static_cast<int64_t>(data.samples[static_cast<std::size_t>(row)].size());
    r.computed_tokens += p.padded_tokens();
  }
  r.flops_per_pass = pass_flops(v, data, m, skips_padded_keys, pruned_heads);
  if (pruned_heads > 0) {
    const double full = pass_flops(v, data, m, skips_padded_keys, 0);
    set_metric(r.metrics, metric{"pruned_flops_saved", 1.0 - r.flops_per_pass / full, metric_unit::share,
                                 metric_direction::higher_is_better, "flops",
                                 fmt::format("share of the forward FLOPs (model/flops.hpp) the pruned heads no longer "
                                             "compute: {:.4g} instead of {:.4g} GFLOP per pass",
                                             r.flops_per_pass / 1e9, full / 1e9),
                                 ""});
  }
  r.padding_efficiency = static_cast<double>(r.real_tokens) / static_cast<double>(r.computed_tokens);
  r.mean_batch_size = static_cast<double>(rows) / static_cast<double>(v.plans.size());
}

// The device memory a variant needs, measured, beside every other variant's (with and without
// offload side by side): its weights on the device and those plus its check pass's working peak.
void record_device_memory(int64_t weight_bytes, variant_result& r) {
  if (weight_bytes < 0) return;
  const std::string how = r.peak_memory_method.rfind("cuda", 0) == 0
                              ? "the CUDA caching allocator's allocated bytes"
                              : "the CPU allocator hook";
  set_metric(r.metrics, metric{"device_weight_bytes", static_cast<double>(weight_bytes), metric_unit::bytes,
                               metric_direction::lower_is_better, "memory",
                               "weights held on the device, measured when placed (" + how + ")", ""});
  metric peak{"device_peak_bytes", not_a_number, metric_unit::bytes, metric_direction::lower_is_better, "memory",
              "device_weight_bytes + the check pass's working peak: the device memory the variant needs", ""};
  if (r.peak_memory_bytes >= 0)
    peak.value = static_cast<double>(weight_bytes + r.peak_memory_bytes);
  else
    peak.note = "not measured: " + r.peak_memory_method;
  set_metric(r.metrics, peak);
}

}  // namespace

offline_scenario::offline_scenario(const config& cfg, std::vector<variant_plan> plans, const dataset& data,
                                   offline_setup setup)
    : cfg_(cfg),
      plans_(std::move(plans)),
      data_(data),
      setup_(std::move(setup)),
      base_cfg_(*find_variant(cfg, cfg.baseline)),
      base_batching_(make_batching(base_cfg_.batching, cfg.workload.max_length,
                                   default_planner_calibration(cfg.model).model)
                         ->describe()),
      variants_(cfg.variants.size()) {}

offline_scenario::~offline_scenario() = default;

std::string offline_scenario::describe(std::size_t i, const std::string& batching) const {
  const auto base = static_cast<std::size_t>(&base_cfg_ - cfg_.variants.data());
  return describe_variant(cfg_.variants[i], plans_[i], base_cfg_, plans_[base], batching,
                          batching.empty() ? "" : base_batching_);
}

bool offline_scenario::collective(std::size_t i) const {
  const variant_config& vc = cfg_.variants[i];
  return vc.parallel && vc.parallel->mode == parallel_mode::processes;
}

std::optional<skip_verdict> offline_scenario::skip_reason(std::size_t i, variant_result& r) {
  const variant_config& vc = cfg_.variants[i];
  if (setup_.scripted) {
    r.attention = "torchscript";  // the module's own attention; the variant's setting does not apply
    r.sdpa_backend = "";
    if (auto why = torchscript_skip_reason(vc); !why.empty())
      return skip_verdict{
          why, vc.description.empty() ? "a technique TorchScript models cannot run" : vc.description};
  }
  // What this machine or process can run does not constrain a pending variant: the loop skips it.
  if (vc.pending) return std::nullopt;
  distributed_world* world = setup_.world;
  if (world && world->rank() != 0 && !collective(i))
    return skip_verdict{"runs on rank 0", ""};  // rank 0 runs it alone; this rank's result is not reported
  if (collective(i) && !world)
    return skip_verdict{
        "runs across processes: start it with `attnbench launch --nproc N` (or torchrun, srun); "
        "this is a single process",
        describe(i, "")};
  if (const auto& why = plans_[i].skip_reason) return skip_verdict{*why, describe(i, "")};
  if (needs_whole_model_on_device(i)) {
    try {
      setup_.model->on_device();
    } catch (const c10::OutOfMemoryError& e) {
      // Out of memory is this variant's result, not the run's end: the variants that do not need
      // the whole model on the device (offload) still run.
      int64_t weights = 0;
      for (const auto& p : setup_.model->host()->parameters()) weights += static_cast<int64_t>(p.nbytes());
      return skip_verdict{
          fmt::format("OOM: out of device memory placing the whole model ({} bytes of weights) "
                      "on {}: {}",
                      weights, setup_.device.str(), e.what_without_backtrace()),
          describe(i, "")};
    }
  }
  return std::nullopt;
}

std::string plan_difference_note(const std::string& other, const std::string& batching,
                                 const std::vector<batch_plan>& mine, const std::vector<batch_plan>& theirs) {
  const auto shape = [](const std::vector<batch_plan>& plans) {
    std::vector<std::pair<int64_t, int64_t>> s;  // (rows, padded length) of every batch, sorted
    int64_t padded = 0;
    for (const auto& b : plans) {
      s.emplace_back(static_cast<int64_t>(b.rows.size()), b.padded_length);
      padded += b.padded_tokens();
    }
    std::sort(s.begin(), s.end());
    return std::make_pair(s, padded);
  };
  const auto [a, a_padded] = shape(mine);
  const auto [b, b_padded] = shape(theirs);
  if (a == b) return "";
  return fmt::format(
      "batch plan differs from \"{}\"'s though both batch as {}: {} batches, {} padded tokens against {} and {}; "
      "the difference between the two rows includes their plans",
      other, batching, a.size(), a_padded, b.size(), b_padded);
}

// Offloaded variants stream the layers from the host model, data-parallel workers make their own
// replicas from it; every other variant runs the whole model on the run's device.
bool offline_scenario::needs_whole_model_on_device(std::size_t i) const {
  const variant_config& vc = cfg_.variants[i];
  if (!setup_.model || setup_.scripted || vc.pending) return false;
  if (plans_[i].owner) return true;  // a registered technique's executor starts from the whole model
  if (vc.offload) return false;
  if (vc.parallel && vc.parallel->mode == parallel_mode::threads) return false;
  return true;
}

void offline_scenario::prepare(std::size_t i, variant_result& r) {
  const variant_config& vc = cfg_.variants[i];
  offline_variant& v = variants_[i];
#if ATTNBENCH_PLANTED_SLOWDOWN_PERCENT > 0
  r.notes.push_back(fmt::format("test-only build: a planted slowdown of {}% per CPU batch (CMake "
                                "ATTNBENCH_TEST_PLANTED_SLOWDOWN)",
                                ATTNBENCH_PLANTED_SLOWDOWN_PERCENT));
#endif
  if (vc.checkpointing.policy != checkpoint_policy::none)
    r.notes.push_back("no effect in inference: no activations are kept");
  batch_cost_model cost = default_planner_calibration(cfg_.model).model;
  if (vc.batching.kind == "dynamic" && vc.batching.planner == planner_kind::cost) {
    // One fit per resolved precision (the plan's label: "fp32", "amp-bf16", "bf16", "int8" …), through
    // the executor of the first cost-planned variant of that precision, the one it will run (an
    // int8 or cast variant through its technique's path, not fp32's): a second row that changes the
    // attention, or runs on worker threads, is planned with the same overhead and so gets the same
    // batches. Keyed by the config's precision value, an int8 or bf16-cast row would have been
    // planned by fp32's fit.
    const std::string label = plans_[i].precision.label;
    const bool pinned_backend =
        vc.attention == attention_kind::sdpa && vc.backend != sdpa_backend::auto_select;
    const std::string setting =
        fmt::format("{} {}{}", label, to_string(vc.attention), pinned_backend ? "/" + to_string(vc.backend) : "");
    auto it = planners_.find(label);
    if (it == planners_.end()) {
      planner_calibration fit = default_planner_calibration(cfg_.model);
      if (setup_.world) {
        // Ranks that fitted their own overhead could cut different batches.
        fit.method = "default: every rank of a multi-process run must plan alike";
      } else if (!setup_.model) {
        fit.method = "default: a TorchScript model is not calibrated";
      } else if (vc.offload) {
        // Calibrating runs the plain path: it would place the whole model on the device.
        fit.method = "default: an offload variant is not calibrated";
      } else {
        const auto exec =
            make_executor(setup_.model->on_device(), setup_.device, vc, plans_[i], cfg_.model.causal);
        fit = calibrate_planner(*exec, setting, setup_.device, cfg_.model, data_, vc.batching);
        fit.method +=
            fmt::format(" (variant \"{}\"; every cost-planned {} variant plans with it)", vc.name, label);
      }
      it = planners_.emplace(label, std::move(fit)).first;
    }
    cost = it->second.model;
    annotate_planner(it->second, r);
  }
  const auto batching = make_batching(vc.batching, cfg_.workload.max_length, cost);
  r.batching = batching->describe() + (vc.batching.pool ? " pool" : "") + (vc.batching.cache ? " cache" : "");
  r.description = describe(i, r.batching);
  const std::vector<int64_t> rows = computed_rows(v, data_, vc.batching.cache, r);
  const torch::Device device = setup_.device;
  if (collective(i)) {
    try {
      auto ranks = std::make_unique<distributed_executor>(*setup_.world, setup_.model->on_device(), device,
                                                          vc, plans_[i], cfg_.model.causal, data_, rows,
                                                          *batching, cfg_.measure.assemble_inputs);
      v.plans = ranks->plans();
      v.executor = std::move(ranks);
    } catch (const distributed_error&) {
      throw;
    } catch (const std::exception& e) {
      // The other ranks would wait for this one at the check pass: a rank that cannot set up its
      // shard ends the run.
      throw distributed_error(fmt::format("rank {}: could not set up its shard of {}: {}",
                                          setup_.world->rank(), vc.name, error_text(e)));
    }
  } else if (vc.parallel) {
    // Workers own their shards' batches and inputs; v.plans lists them all, for the accounting.
    // Replicas are made from the host model: none of them needs the run device's copy.
    auto parallel =
        std::make_unique<data_parallel_executor>(setup_.model->host(), vc, plans_[i], cfg_.model.causal,
                                                 data_, rows, *batching, cfg_.measure.assemble_inputs);
    v.plans = parallel->plans();
    v.executor = std::move(parallel);
  } else {
    v.plans = batching->plan(data_, rows);
    if (cfg_.measure.assemble_inputs) {
      v.assembler = std::make_unique<input_assembler>(data_, device, vc.batching.pool);
    } else {
      // Built once before timing, each batch in its own tensors (pooled buffers would be shared).
      input_assembler once(data_, device, /*pool=*/false);
      for (const auto& p : v.plans) v.prebuilt.push_back(once.assemble(p));
    }
    if (setup_.scripted) {
      v.executor = std::make_unique<torchscript_executor>(setup_.scripted, device, plans_[i]);
    } else {
      // What the executor allocates on the device while it is built, measured: an offload
      // executor's resident part and slots (it is given the host model, whose layers stay there).
      const peak_memory_scope built(device);
      v.executor = make_executor(vc.offload ? setup_.model->host() : setup_.model->on_device(), device, vc,
                                 plans_[i], cfg_.model.causal);
      synchronize(device);
      const int64_t own = built.current_bytes();
      if (vc.offload)
        v.device_weight_bytes = own;
      else if (setup_.model->device_bytes() >= 0)
        v.device_weight_bytes = setup_.model->device_bytes() + std::max<int64_t>(0, own);
    }
  }
  for (const auto& q : planned_) {
    if (q.batching != r.batching) continue;
    // Said once, against the first row that batches alike.
    if (std::string note = plan_difference_note(q.name, r.batching, v.plans, q.plans); !note.empty()) {
      r.notes.push_back(std::move(note));
      break;
    }
  }
  planned_.push_back({r.name, r.batching, v.plans});
  const int64_t pruned_heads = setup_.scripted ? 0 : cfg_.model.heads - plans_[i].heads;
  count_work(v, data_, cfg_.model, vc.attention == attention_kind::custom && !setup_.scripted, pruned_heads,
             static_cast<int64_t>(rows.size()), r);
}


void offline_scenario::check_pass(std::size_t i, variant_result& r) {
  const variant_config& vc = cfg_.variants[i];
  offline_variant& v = variants_[i];
  v.executor->begin_phase(pass_phase::check);
  // A rank measures its own process only: its devices are the rank's (the parallel table).
  run_check_pass(v, r, data_, setup_.device,
                 collective(i) ? std::vector<torch::Device>{setup_.device} : variant_devices(vc, setup_.device));
  if (collective(i)) {
    // Each rank measured its own process; the variant's figure would be one rank's share.
    const auto peaks = setup_.world->all_gather({static_cast<double>(r.peak_memory_bytes)});
    for (const auto& p : peaks) v.rank_peak_bytes.push_back(static_cast<int64_t>(p[0]));
    r.peak_memory_bytes = -1;
    r.peak_memory_method =
        "n/a: the ranks are separate processes (each rank's own peak is in the parallel table)";
  } else if (auto gap = memory_not_covered(vc, setup_.device)) {
    r.peak_memory_bytes = -1;
    r.peak_memory_method = "n/a: " + *gap;
    for (const auto& [d, bytes] : v.device_peaks) {
      std::string name = "peak_memory_" + d.str();  // "peak_memory_cuda1"
      name.erase(std::remove(name.begin(), name.end(), ':'), name.end());
      set_metric(r.metrics, metric{name, bytes >= 0 ? static_cast<double>(bytes) : not_a_number,
                                   metric_unit::bytes, metric_direction::lower_is_better, "memory",
                                   "check-pass working peak on " + d.str() + " alone",
                                   bytes >= 0 ? "" : "not measured"});
    }
  }
  record_device_memory(v.device_weight_bytes, r);
  if (setup_.model && vc.attention == attention_kind::sdpa)
    r.sdpa_backend_used =
        sdpa_backends_in_use(setup_.model->host(), data_, v.plans, vc, plans_[i], setup_.device);
  if (vc.attention == attention_kind::custom) {
    // The kernel the device resolves "custom" to, and which of its code paths this CPU runs.
    const std::string name = vc.kernel.empty() ? std::string(default_kernel(setup_.device.is_cuda())) : vc.kernel;
    r.attention = name;
    if (auto impl = find_attention_impl(name); impl && impl->code_path && setup_.model) {
      const model_config& m = setup_.model->host()->config();
      const auto dtype = plans_[i].precision.activations;
      r.notes.push_back(fmt::format("attention {}: its {} code path for {} inputs (chosen at run time from this "
                                    "machine's features)",
                                    name, impl->code_path(setup_.device, dtype, m.hidden / m.heads),
                                    c10::toString(dtype)));
    }
  }
}

pass_timing offline_scenario::pass(std::size_t i, pass_phase phase) {
  offline_variant& v = variants_[i];
  v.executor->begin_phase(phase);
  pass_record p = time_pass(v, data_, setup_.device);
  if (phase == pass_phase::timed) {
    ++v.timed_passes;
    v.timed_allocations += p.allocations;
  }
  return std::move(p.timing);
}

const torch::Tensor& offline_scenario::check_outputs(std::size_t i) const { return variants_.at(i).outputs; }

bool offline_scenario::end_of_passes() {
  for (auto& v : variants_)
    if (v.executor) v.executor->begin_phase(pass_phase::other);
  distributed_world* world = setup_.world;
  if (!world) return true;
  world->meet("end-of-passes");  // ranks other than 0 stay until rank 0 has everything it needs from them
  return world->rank() == 0;     // the others have no baseline to compare with
}

check_result offline_scenario::check(std::size_t i, std::size_t base, double tolerance, variant_result& r) {
  offline_variant& v = variants_[i];
  if (setup_.perturb_variant && *setup_.perturb_variant == r.name) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/7);
    const double scale = v.outputs.abs().max().item<double>() * perturb_scale;
    v.outputs = v.outputs + at::randn(v.outputs.sizes(), gen, v.outputs.options()) * scale;
  }
  const torch::Tensor& expected = variants_[base].outputs;
  const std::string cls(precision_class_of(plans_[i].precision.dtype).name);
  if (cfg_.check.study == "always") {
    if (auto ev = study_for(cls); ev && ev->unavailable.empty())
      set_metric(r.metrics, metric{"study_noise_rel_l2", study_noise_rel_l2(*ev), "", metric_direction::neither,
                                   "check", fmt::format("largest relative L2 of {} randomly rounded float64 runs "
                                                        "at {}'s unit roundoff against the float64 reference "
                                                        "(the class's noise on this model and these samples)",
                                                        ev->perturbed.size(), cls), ""});
  }
  return compare_outputs(v.outputs, expected, tolerance, output_kind_of(cfg_.model, expected.size(-1)),
                         [this, cls] { return study_for(cls); });
}

std::shared_ptr<const decision_evidence> offline_scenario::study_for(const std::string& class_name) {
  if (auto it = studies_.find(class_name); it != studies_.end()) return it->second;
  std::shared_ptr<decision_evidence> ev;
  if (!setup_.model) {
    ev = std::make_shared<decision_evidence>();
    ev->unavailable = "a TorchScript model has no float64 study";
  } else {
    if (setup_.progress) setup_.progress("check", "float64 study (" + class_name + ")", 0, study_runs + 1);
    ev = run_decision_study(setup_.model->host(), data_, class_name);
  }
  studies_[class_name] = ev;
  return ev;
}

void offline_scenario::finalize(std::size_t i, std::optional<std::size_t> base, variant_result& r) {
  offline_variant& v = variants_[i];
  if (cfg_.measure.assemble_inputs && v.timed_passes > 0)
    r.allocations_per_batch = static_cast<double>(v.timed_allocations) /
                              static_cast<double>(v.timed_passes * static_cast<int64_t>(v.plans.size()));
  v.executor->annotate(r);
  for (std::size_t k = 0; k < v.rank_peak_bytes.size() && k < r.parallel.workers.size(); ++k)
    r.parallel.workers[k].peak_memory_bytes = v.rank_peak_bytes[k];
  // A worker thread alone on its device: that device's peak is its own.
  for (auto& w : r.parallel.workers) {
    if (!v.rank_peak_bytes.empty()) break;
    const auto same = std::count_if(r.parallel.workers.begin(), r.parallel.workers.end(),
                                    [&](const parallel_worker& o) { return o.device == w.device; });
    for (const auto& [d, bytes] : v.device_peaks)
      if (same == 1 && d.str() == w.device) w.peak_memory_bytes = bytes;
  }
  outputs_[r.name] = v.outputs;
  if (cfg_.scenario == "server" && base) serve(i, *base, r);
}

// The server scenario's rate sweep over a variant that ran every pass; a sweep that fails or
// serves wrong outputs fails the variant.
void offline_scenario::serve(std::size_t i, std::size_t base, variant_result& r) {
  server_sweep sweep;
  try {
    sweep = run_server_sweep(
        cfg_, data_, cfg_.variants[i], plans_[i], *variants_[i].executor, setup_.device,
        variants_[base].outputs,
        [&](const std::string& what, int64_t k, int64_t n) {
          if (setup_.progress) setup_.progress("server", what, k, n);
        },
        setup_.observer,
        [this, cls = std::string(precision_class_of(plans_[i].precision.dtype).name)] {
          return study_for(cls);
        });
  } catch (const std::exception& e) {
    sweep.check.status = status_kind::fail;
    sweep.check.message = "failed: " + error_text(e);
  }
  r.server = sweep.points;
  r.max_sustainable_rate = sweep.max_sustainable_rate;
  if (!sweep.interrupted.empty()) r.notes.push_back("server sweep interrupted by " + sweep.interrupted);
  if (sweep.check.status == status_kind::fail && r.status != status_kind::fail) {
    r.status = status_kind::fail;
    r.check = sweep.check;
    r.reason = "server scenario: " + sweep.check.message;
  }
}

}  // namespace attnbench
