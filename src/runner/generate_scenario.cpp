#include "runner/generate_scenario.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/byte_size.hpp"
#include "kernels/cpu/flash_attention.hpp"
#include "kernels/cpu/int8_gemv.hpp"
#include "kernels/kernel_catalog.hpp"
#include "model/int8_linear.hpp"
#include "parallel/shard.hpp"
#include "report/ceilings.hpp"
#include "report/metric_text.hpp"
#include "runner/generate_engine.hpp"
#include "runner/generate_server.hpp"
#include "runner/generate_workers.hpp"
#include "runner/decision_study.hpp"
#include "runner/generation_study.hpp"
#include "runner/memory_tracker.hpp"
#include "stats/summary.hpp"
#include "techniques/decoder_offload.hpp"
#include "techniques/precision.hpp"

namespace attnbench {

namespace {

// One static batch of prompts: the samples it holds, their ids (B, P) on the device, left-padded
// to P, and each row's padding (empty where every row is P long).
struct prompt_batch {
  std::vector<int64_t> samples;
  torch::Tensor ids;
  std::vector<int64_t> pad;
};

// Per pass, what the scenario's metrics are computed from.
struct pass_record {
  double prefill_ms = 0, decode_ms = 0;
  int64_t prefill_tokens = 0, decode_tokens = 0;
  std::vector<double> ttft_ms, step_ms;
  std::vector<double> first_token_ms;  // each sequence's first token after the pass's (common) start
  double seconds = 0;                  // the whole pass
  double decode_bytes = -1;  // continuous batching: what its steps read (static: computed in finalize)
  engine_totals engine;      // continuous batching's
};

std::string values_interval_note(const std::vector<double>& values, const char* unit) {
  const summary s = summarize(values);
  if (!(s.geomean_ci_low == s.geomean_ci_low)) return fmt::format("one timed pass: no interval ({} values)", s.n);
  return interval_note(s.geomean_ci_low, s.geomean_ci_high, unit, static_cast<std::size_t>(s.n));
}

// A STREAM-style triad, a = b + 3·c over float32 arrays of 32 Mi elements (128 MiB each, far past
// any cache), at the run's intra-op threads: bytes moved (two reads, one write, as STREAM counts
// them) over the best of 8 timed calls after one untimed, in GB/s. What decoding could read at most.
double measure_triad_gb_per_s(torch::Device device) {
  constexpr int64_t n = int64_t{32} << 20;
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(device);
  auto a = torch::empty({n}, options), b = torch::ones({n}, options), c = torch::full({n}, 2.0f, options);
  double best = 0;
  for (int k = 0; k < 9; ++k) {
    const auto t0 = pass_clock::now();
    torch::add_out(a, b, c, 3.0);
    if (device.is_cuda()) (void)a[0].item<float>();
    const double s = seconds_since(t0);
    if (k > 0 && s > 0) best = std::max(best, 3.0 * static_cast<double>(n) * 4.0 / s / 1e9);
  }
  return best;
}

}  // namespace

struct generate_variant {
  DecoderLM model{nullptr};
  std::optional<c10::ScalarType> autocast;
  torch::ScalarType cache_dtype = torch::kFloat;
  attention_settings how;
  std::vector<prompt_batch> batches;
  torch::Tensor tokens;  // (N, new) int64 on the CPU: the check pass's
  int64_t cache_bytes = 0;
  std::optional<generation_engine::settings> continuous;  // dynamic batching: the engine's settings
  generation_engine::settings served;                     // the server scenario's engine
  std::vector<pass_record> timed;
  std::shared_ptr<decoder_offload> offload;  // offloaded blocks: the streamer the model's forwards use
  // Data parallel ("parallel"): one share per worker, and the worker threads that run them.
  struct share {
    DecoderLM model{nullptr};            // the worker's own copy of the variant's model
    std::vector<std::size_t> batches;    // indices into `batches`, in the pass's order
    int64_t samples = 0, real_tokens = 0;  // its prompts, and their prompt + generated tokens
    int64_t cache_bytes = 0;             // its largest batch's KV cache
    pass_record last;                    // the current pass's
    std::vector<double> unit_ms;         // the current pass's batches
    torch::Tensor tokens;                // (samples, new) int64, in its batches' order: a kept pass's
    double seconds = 0;                  // the current pass's: from the common start to its end
    std::vector<double> pass_s;          // that, per timed pass
  };
  std::vector<share> shares;
  std::unique_ptr<generate_workers> workers;
};

namespace {

// Generates `which` of v's static batches, in order, with `model` on the calling thread (the
// caller holds no-grad): each batch's time into unit_ms, its figures into rec (first_token_ms
// counted from `start`), and, when `keep` is set, each batch's tokens (B, new) on the CPU to it.
void generate_static(DecoderLM& model, const generate_variant& v, const std::vector<std::size_t>& which,
                     int64_t new_tokens, torch::Device device, pass_clock::time_point start, pass_record& rec,
                     std::vector<double>& unit_ms, int64_t& cache_bytes,
                     const std::function<void(const prompt_batch&, const torch::Tensor&)>& keep) {
  for (const std::size_t k : which) {
    const prompt_batch& b = v.batches[k];
    const auto tb = pass_clock::now();
    const autocast_scope amp(v.autocast, device.type());  // `with torch.autocast(...): model.generate(batch)`
    const generation g = generate_greedy(model, b.ids, new_tokens, v.cache_dtype, b.pad);
    unit_ms.push_back(seconds_since(tb) * 1e3);
    cache_bytes = std::max(cache_bytes, g.cache_bytes);
    rec.prefill_ms += g.prefill_ms;
    rec.prefill_tokens += b.ids.numel() - std::accumulate(b.pad.begin(), b.pad.end(), int64_t{0});
    rec.ttft_ms.push_back(g.prefill_ms);
    const double first = std::chrono::duration<double, std::milli>(tb - start).count() + g.prefill_ms;
    rec.first_token_ms.insert(rec.first_token_ms.end(), b.samples.size(), first);
    for (double ms : g.step_ms) {
      rec.decode_ms += ms;
      rec.step_ms.push_back(ms);
    }
    rec.decode_tokens += b.ids.size(0) * (new_tokens - 1);
    if (keep) keep(b, g.tokens.cpu());
  }
}

// Why the generate scenario cannot run a variant's "parallel" block here, or nullopt.
std::optional<std::string> decoder_parallel_skip_reason(const variant_config& vc, torch::Device device) {
  if (!vc.parallel) return std::nullopt;
  const auto& devices = vc.parallel->devices;
  if (!device.is_cpu() || std::any_of(devices.begin(), devices.end(), [](const std::string& d) { return d != "cpu"; }))
    return std::string("the generate scenario's data-parallel workers run on the CPU only yet (a CPU run with "
                       "\"devices\": [\"cpu\", …])");
  if (vc.batching.kind == "dynamic")
    return std::string("data parallel with continuous batching is not run yet (each worker would batch its share "
                       "on its own engine): use static batches (\"batch_size\") with \"parallel\"");
  return std::nullopt;
}

}  // namespace

token_comparison compare_tokens(const torch::Tensor& variant, const torch::Tensor& baseline) {
  TORCH_CHECK(variant.sizes() == baseline.sizes(), "compare_tokens: shapes differ");
  token_comparison c;
  c.sequences = variant.size(0);
  const auto equal = variant.eq(baseline);  // (N, new)
  c.token_agreement = variant.numel() ? equal.to(torch::kDouble).mean().item<double>() : 1.0;
  const auto eq = equal.contiguous();
  const auto* e = eq.data_ptr<bool>();
  const int64_t n = variant.size(1);
  for (int64_t s = 0; s < c.sequences; ++s) {
    int64_t step = -1;
    for (int64_t t = 0; t < n && step < 0; ++t)
      if (!e[s * n + t]) step = t;
    if (step < 0)
      ++c.identical;
    else
      c.divergences.emplace_back(s, step);
  }
  return c;
}

generate_scenario::generate_scenario(const config& cfg, std::vector<variant_plan> plans, const dataset& data,
                                     DecoderLM model, torch::Device device, const environment_info& env,
                                     run_observer* observer)
    : cfg_(cfg),
      plans_(std::move(plans)),
      data_(data),
      model_(std::move(model)),
      device_(device),
      env_(env),
      observer_(observer) {
  variants_.resize(cfg.variants.size());
}

generate_scenario::~generate_scenario() = default;

std::optional<std::string> decoder_skip_reason(const variant_config& vc, const variant_plan& p, torch::Device device) {
  std::vector<std::string> unsupported;
  if (vc.pipeline) unsupported.emplace_back("pipeline");
  if (vc.checkpointing.policy != checkpoint_policy::none) unsupported.emplace_back("checkpointing");
  if (vc.attention == attention_kind::custom) {
    const std::string kernel = vc.kernel.empty() ? std::string(default_kernel(device.is_cuda())) : vc.kernel;
    if (kernel != "cpu-flash" || !device.is_cpu())
      unsupported.push_back(fmt::format("the custom kernel \"{}\" on {} (only cpu-flash, on the CPU, reads a KV cache)",
                                        kernel, device.str()));
  }
  const bool precision_owner = p.precision.label == "bf16" || p.precision.label == "fp16" ||
                               p.precision.label == "int8" || p.precision.label == "int8-weight-only";
  if (p.owner && !precision_owner)
    for (const auto& [key, value] : vc.techniques) unsupported.push_back(fmt::format("\"{}\"", key));
  if (!unsupported.empty())
    return fmt::format("the generate scenario does not run {} yet (built for the encoder's executors)",
                       fmt::join(unsupported, ", "));
  if (p.precision.dtype == "int8" && !device.is_cpu()) return std::string("int8 linears run on the CPU only");
  if (vc.offload)
    if (auto why = decoder_offload_skip_reason(*vc.offload, device, p.precision.label)) return why;
  if (!p.skip_reason)
    if (auto why = decoder_parallel_skip_reason(vc, device)) return why;
  return p.skip_reason;
}

decoder_variant_model prepare_decoder_model(const DecoderLM& base, const variant_config& vc, const variant_plan& p) {
  torch::NoGradGuard no_grad;
  decoder_variant_model v;
  v.how.kind = vc.attention;
  v.how.backend = vc.backend;
  v.how.causal = true;
  v.how.kernel = vc.kernel;
  v.autocast = p.precision.autocast;
  const std::string& dtype = p.precision.dtype;
  if (p.precision.autocast) {
    v.model = base;  // fp32 weights, autocast at run time
    v.cache_dtype = *p.precision.autocast;
  } else if (p.owner && (dtype == "bf16" || dtype == "fp16")) {
    v.model = copy_decoder(base, scalar_type_of_name(dtype));
    v.cache_dtype = v.model->dtype();
  } else if (p.precision.label == "int8-weight-only") {
    v.model = copy_decoder(base, torch::kFloat);
    for (auto& l : v.model->block_linears()) quantize_linear(*l, 8);
    v.model->pack_linears(linear_kind::int8_weight);
    v.cache_dtype = torch::kFloat;
    v.notes.push_back(fmt::format("int8 weight-only kernel: the {} code path (kernels/cpu/int8_gemv.hpp)",
                                  to_string(int8_weight_linear_path(base->dims().hidden))));
  } else if (dtype == "int8") {
    v.model = copy_decoder(base, torch::kFloat);
    v.int8_weight_bits = int8_weight_bits(int8_gemm_saturates());
    for (auto& l : v.model->block_linears()) quantize_linear(*l, v.int8_weight_bits);
    v.model->pack_linears(linear_kind::int8);
    v.cache_dtype = torch::kFloat;
  } else {
    v.model = base;
    v.cache_dtype = torch::kFloat;
  }
  if (vc.offload) {
    // The variant's own copy: its blocks' weights become the host side, streamed into slots.
    if (v.model.get() == base.get()) v.model = copy_decoder(base, torch::kFloat);
    v.offload = std::make_shared<decoder_offload>(v.model, *vc.offload);
    v.notes.push_back(fmt::format("offload: the {} blocks stream from host memory into {} slot(s) before each block "
                                  "computes, in every forward (target cpu: synchronous copies, all exposed)",
                                  base->dims().layers, v.offload->streamer().resident_bound()));
  }
  if (vc.attention == attention_kind::custom) {
    const std::string note = cpu_flash_amx_note();
    v.notes.push_back(fmt::format("attention: cpu-flash against the KV cache, the {} code path{} "
                                  "(kernels/cpu/flash_attention.hpp)",
                                  to_string(cpu_flash_path(v.cache_dtype, base->dims().head_dim)),
                                  note.empty() ? "" : " (" + note + ")"));
  }
  return v;
}

std::optional<skip_verdict> generate_scenario::skip_reason(std::size_t i, variant_result& r) {
  if (auto why = decoder_skip_reason(cfg_.variants[i], plans_[i], device_)) return skip_verdict{*why, r.description};
  return std::nullopt;
}

void generate_scenario::prepare(std::size_t i, variant_result& r) {
  torch::NoGradGuard no_grad;
  const variant_config& vc = cfg_.variants[i];
  const variant_plan& p = plans_[i];
  auto v = std::make_unique<generate_variant>();
  decoder_variant_model m = prepare_decoder_model(model_, vc, p);
  v->model = m.model;
  v->how = m.how;
  v->autocast = m.autocast;
  v->cache_dtype = m.cache_dtype;
  v->offload = m.offload;
  r.notes.insert(r.notes.end(), m.notes.begin(), m.notes.end());
  if (m.int8_weight_bits > 0)
    set_metric(r.metrics, {"int8_weight_bits", static_cast<double>(m.int8_weight_bits), metric_unit::count,
                           metric_direction::neither, "generate",
                           "the block linears' weight bits (7 where oneDNN's u8·s8 product saturates)", ""});
  // Consecutive samples, left-padded to the batch's longest prompt (or to workload.max_length), as
  // Hugging Face's generate() takes a padded batch with its attention mask: the pad positions are
  // computed in the prefill and read by every decode step, and masked out of attention.
  // (Continuous batching keeps one-prompt batches: the check's teacher forcing runs on them.)
  const bool dynamic = vc.batching.kind == "dynamic";
  const int64_t batch = !dynamic && vc.batching.batch_size > 0 ? vc.batching.batch_size : 1;
  const bool to_max = !dynamic && vc.batching.padding == padding_kind::max_length;
  int64_t prompt_tokens = 0, padded_tokens = 0;
  for (std::size_t at = 0; at < data_.samples.size(); at += static_cast<std::size_t>(batch)) {
    prompt_batch b;
    const std::size_t end = std::min(data_.samples.size(), at + static_cast<std::size_t>(batch));
    int64_t longest = 0;
    for (std::size_t s = at; s < end; ++s) {
      b.samples.push_back(static_cast<int64_t>(s));
      longest = std::max(longest, static_cast<int64_t>(data_.samples[s].size()));
    }
    if (to_max) longest = std::max(longest, cfg_.workload.max_length);
    auto ids = torch::zeros({static_cast<int64_t>(b.samples.size()), longest}, torch::kLong);
    bool any_pad = false;
    for (std::size_t k = 0; k < b.samples.size(); ++k) {
      const auto& sample = data_.samples[static_cast<std::size_t>(b.samples[k])];
      const int64_t pad = longest - static_cast<int64_t>(sample.size());
      std::copy(sample.begin(), sample.end(), ids.data_ptr<int64_t>() + static_cast<int64_t>(k) * longest + pad);
      b.pad.push_back(pad);
      any_pad = any_pad || pad > 0;
      prompt_tokens += static_cast<int64_t>(sample.size());
    }
    if (!any_pad) b.pad.clear();
    padded_tokens += ids.numel();
    b.ids = ids.to(device_);
    v->batches.push_back(std::move(b));
  }
  const int64_t generated = static_cast<int64_t>(data_.samples.size()) * cfg_.generate.max_new_tokens;
  r.batches = static_cast<int64_t>(v->batches.size());
  r.real_tokens = prompt_tokens + generated;
  r.computed_tokens = padded_tokens + generated;
  r.padding_efficiency = static_cast<double>(r.real_tokens) / static_cast<double>(std::max<int64_t>(1, r.computed_tokens));
  r.mean_batch_size = static_cast<double>(data_.samples.size()) / static_cast<double>(std::max<int64_t>(1, r.batches));
  r.batching = fmt::format("static bs={}, consecutive prompts left-padded to {} (pad tokens masked out); greedy, {} "
                           "new tokens, KV cache in {}",
                           batch, to_max ? "workload.max_length" : "the batch's longest", cfg_.generate.max_new_tokens,
                           dtype_name(v->cache_dtype));
  v->served.slots = batch;
  v->served.continuous = false;
  v->served.new_tokens = cfg_.generate.max_new_tokens;
  v->served.cache_dtype = v->cache_dtype;
  if (vc.batching.kind == "dynamic") {
    generation_engine::settings es;
    es.slots = vc.batching.max_batch_size;
    es.continuous = true;
    es.max_cache_tokens = vc.batching.max_tokens;
    es.new_tokens = cfg_.generate.max_new_tokens;
    es.cache_dtype = v->cache_dtype;
    v->continuous = es;
    v->served = es;
    r.batching = fmt::format("continuous: up to {} sequences per decode step, joining at step boundaries, KV caches "
                             "of {} positions together at most (no padding: each sequence its own cache); greedy, {} "
                             "new tokens, KV cache in {}",
                             es.slots, es.max_cache_tokens, es.new_tokens, dtype_name(v->cache_dtype));
  }
  if (vc.parallel) {
    // The batches dealt out whole by their FLOPs, costliest first, each to the worker with the least
    // so far (parallel/shard.hpp, as the encoder's): a batch's work counted as prefilling its prompt
    // and the generated tokens together, padding included.
    const parallel_config& pc = *vc.parallel;
    const auto n = static_cast<int64_t>(pc.devices.size());
    const int64_t threads =
        pc.threads_per_worker > 0 ? pc.threads_per_worker : std::max<int64_t>(1, at::get_num_threads() / n);
    const int64_t new_tokens = cfg_.generate.max_new_tokens;
    std::vector<double> cost;
    for (const auto& b : v->batches)
      cost.push_back(decoder_prefill_flops(v->model, b.ids.size(0), b.ids.size(1) + new_tokens));
    for (auto& batches : assign_by_cost(cost, n)) {
      generate_variant::share s;
      // Each worker its own copy, made from the run's model as the variant's own is: the same weights.
      s.model = prepare_decoder_model(copy_decoder(model_, torch::kFloat), vc, p).model;
      s.model->set_attention(v->how);
      s.batches = std::move(batches);
      for (const std::size_t k : s.batches)
        for (const int64_t sample : v->batches[k].samples) {
          ++s.samples;
          s.real_tokens += static_cast<int64_t>(data_.samples[static_cast<std::size_t>(sample)].size()) + new_tokens;
        }
      v->shares.push_back(std::move(s));
    }
    v->workers = std::make_unique<generate_workers>(std::vector<int64_t>(static_cast<std::size_t>(n), threads));
    r.batching += fmt::format("; data parallel over {} worker threads ({}) × {} thread{}, the batches dealt out by "
                              "FLOPs",
                              n, fmt::join(pc.devices, ", "), threads, threads == 1 ? "" : "s");
    r.notes.push_back(
        "data parallel: each worker generates its share of the prompts with its own copy of the model and its own KV "
        "caches; every worker starts at one common start and the pass ends when the last one is done, so the pass "
        "time (sequences/s, generated_tokens_per_s) is the wall time of the whole");
  }
  if (r.description.empty() && !p.description.empty()) r.description = p.description;
  variants_[i] = std::move(v);
}

pass_timing generate_scenario::run(generate_variant& v, bool keep, bool timed) {
  // No grad, as transformers' generate() runs, rather than the run's inference mode, in which
  // autocast re-casts every fp32 weight on every call: so autocast's cache keeps each weight's cast
  // for the life of its scope, one generate call (a static batch, or a continuous-batching pass).
  // The linears also call ATen's linear on the weight itself (model/packed_linear.hpp: plain_linear):
  // both are needed, as profiling the generate config shows (amp's aten::copy_ share).
  const c10::InferenceMode autocast_cache{/*enabled=*/false};
  torch::NoGradGuard no_grad;
  v.model->set_attention(v.how);
  const int64_t new_tokens = cfg_.generate.max_new_tokens;
  if (keep) v.tokens = torch::empty({static_cast<int64_t>(data_.samples.size()), new_tokens}, torch::kLong);
  pass_record rec;
  pass_timing t;
  struct timed_copies {  // an offloaded variant's copies of this pass, counted on every return
    decoder_offload* offload;
    explicit timed_copies(decoder_offload* o) : offload(o) {
      if (offload) offload->begin_timed_pass();
    }
    ~timed_copies() {
      if (offload) offload->end_timed_pass();
    }
  } copies{timed ? v.offload.get() : nullptr};
  const auto t0 = pass_clock::now();
  if (v.continuous) {
    const autocast_scope amp(v.autocast, device_.type());
    // Every prompt waiting at the start, in sample order; the engine decides who steps together.
    std::vector<generation_request> requests;
    for (std::size_t s = 0; s < data_.samples.size(); ++s)
      requests.push_back({static_cast<int64_t>(s), static_cast<int64_t>(s), 0.0});
    generation_engine engine(v.model, data_, device_, *v.continuous, [t0] { return seconds_since(t0); });
    const auto done = generate_all(engine, requests);
    t.seconds = seconds_since(t0);
    rec.engine = engine.totals;
    rec.prefill_ms = engine.totals.prefill_ms;
    rec.prefill_tokens = engine.totals.prefill_tokens;
    rec.decode_ms = engine.totals.decode_ms;
    rec.decode_tokens = engine.totals.decode_tokens;
    rec.step_ms = engine.totals.step_ms;
    // Weights once per step, each row's cache up to its position: linear in the context.
    const int64_t elt = static_cast<int64_t>(c10::elementSize(v.cache_dtype));
    const double weights = decode_bytes_per_step(v.model, 1, 0, elt);
    const double per_position = decode_bytes_per_step(v.model, 1, 1, elt) - weights;
    rec.decode_bytes = static_cast<double>(engine.totals.steps) * weights +
                       per_position * static_cast<double>(engine.totals.context_sum);
    v.cache_bytes = std::max(v.cache_bytes, engine.totals.peak_cache_bytes);
    for (const auto& g : done) {
      rec.ttft_ms.push_back(g.prefill_ms);
      t.unit_ms.push_back((g.token_s.back() - g.arrival_s) * 1e3);
      if (keep) v.tokens[g.sample].copy_(g.tokens);
    }
    if (timed) v.timed.push_back(std::move(rec));
    return t;
  }
  // A batch's tokens into the rows of its samples.
  const auto store = [&v](const prompt_batch& b, const torch::Tensor& cpu) {
    for (std::size_t k = 0; k < b.samples.size(); ++k) v.tokens[b.samples[k]].copy_(cpu[static_cast<int64_t>(k)]);
  };
  if (v.workers) {
    for (auto& s : v.shares) {
      s.last = pass_record{};
      s.unit_ms.clear();
      if (keep) s.tokens = torch::empty({s.samples, new_tokens}, torch::kLong);
    }
    t.seconds = v.workers->run([&](std::size_t w, pass_clock::time_point start) {
      const c10::InferenceMode worker_autocast_cache{/*enabled=*/false};  // as above, on the worker's thread
      const torch::NoGradGuard worker_no_grad;
      auto& s = v.shares[w];
      int64_t row = 0;
      const std::function<void(const prompt_batch&, const torch::Tensor&)> own = [&](const prompt_batch& /*b*/,
                                                                                      const torch::Tensor& cpu) {
        s.tokens.narrow(0, row, cpu.size(0)).copy_(cpu);
        row += cpu.size(0);
      };
      generate_static(s.model, v, s.batches, new_tokens, device_, start, s.last, s.unit_ms, s.cache_bytes,
                      keep ? own : nullptr);
      s.seconds = seconds_since(start);
    });
    // The whole: the workers' figures together (their prefill and decode times overlap: finalize
    // reports no rate over them), their caches held at once.
    int64_t cache = 0;
    for (auto& s : v.shares) {
      rec.prefill_ms += s.last.prefill_ms;
      rec.decode_ms += s.last.decode_ms;
      rec.prefill_tokens += s.last.prefill_tokens;
      rec.decode_tokens += s.last.decode_tokens;
      rec.ttft_ms.insert(rec.ttft_ms.end(), s.last.ttft_ms.begin(), s.last.ttft_ms.end());
      rec.step_ms.insert(rec.step_ms.end(), s.last.step_ms.begin(), s.last.step_ms.end());
      rec.first_token_ms.insert(rec.first_token_ms.end(), s.last.first_token_ms.begin(), s.last.first_token_ms.end());
      t.unit_ms.insert(t.unit_ms.end(), s.unit_ms.begin(), s.unit_ms.end());
      cache += s.cache_bytes;
      if (timed) s.pass_s.push_back(s.seconds);
      if (keep) {
        int64_t row = 0;
        for (const std::size_t k : s.batches) {
          const prompt_batch& b = v.batches[k];
          store(b, s.tokens.narrow(0, row, static_cast<int64_t>(b.samples.size())));
          row += static_cast<int64_t>(b.samples.size());
        }
      }
    }
    v.cache_bytes = std::max(v.cache_bytes, cache);
    rec.seconds = t.seconds;
    if (timed) v.timed.push_back(std::move(rec));
    return t;
  }
  std::vector<std::size_t> all(v.batches.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  generate_static(v.model, v, all, new_tokens, device_, t0, rec, t.unit_ms, v.cache_bytes,
                  keep ? std::function<void(const prompt_batch&, const torch::Tensor&)>(store) : nullptr);
  t.seconds = seconds_since(t0);
  rec.seconds = t.seconds;
  if (timed) v.timed.push_back(std::move(rec));
  return t;
}

std::map<std::string, torch::Tensor> generate_scenario::take_outputs() {
  std::map<std::string, torch::Tensor> out;
  for (std::size_t i = 0; i < variants_.size(); ++i)
    if (variants_[i] && variants_[i]->tokens.defined())
      out[cfg_.variants[i].name] = variants_[i]->tokens.to(torch::kFloat);
  return out;
}

void generate_scenario::check_pass(std::size_t i, variant_result& r) {
  auto& v = *variants_[i];
  const peak_memory_scope peak(device_);
  run(v, /*keep=*/true, /*timed=*/false);
  r.peak_memory_bytes = peak.peak_bytes();
  r.peak_memory_method = peak.method() + " (the KV cache and every activation of a pass, above the weights)";
}

pass_timing generate_scenario::pass(std::size_t i, pass_phase phase) {
  return run(*variants_[i], false, phase == pass_phase::timed);
}

void generate_scenario::serve(std::size_t i, std::size_t base, variant_result& r) {
  torch::NoGradGuard no_grad;
  auto& v = *variants_[i];
  generate_server_sweep sweep;
  std::string failure;
  try {
    const c10::InferenceMode autocast_cache{/*enabled=*/false};  // as in run(): the cast weights cached for the sweep
    const torch::NoGradGuard no_grad_inside;                     // InferenceMode(false) turned grad mode back on
    const autocast_scope amp(v.autocast, device_.type());
    v.model->set_attention(v.how);
    sweep = run_generate_server(cfg_, data_, r.name, v.model, device_, v.served, variants_[base]->tokens, observer_);
  } catch (const std::exception& e) {
    failure = "failed: " + error_text(e);
  }
  r.server = sweep.points;
  r.max_sustainable_rate = sweep.max_sustainable_rate;
  if (!sweep.interrupted.empty()) r.notes.push_back("server sweep interrupted by " + sweep.interrupted);
  if (failure.empty() && sweep.served == 0) failure = "the server scenario served no request";
  if (failure.empty() && sweep.identical < sweep.served) {
    std::vector<std::string> where;
    for (const auto& [sample, step] : sweep.divergences) where.push_back(fmt::format("prompt {} at step {}", sample, step));
    failure = fmt::format("{} of {} served requests generated other tokens than the baseline's for their prompt "
                          "(first divergence: {})",
                          sweep.served - sweep.identical, sweep.served, fmt::join(where, ", "));
  }
  r.notes.push_back(fmt::format("server scenario: {} of {} served requests generated the baseline's tokens for their "
                                "prompt",
                                sweep.identical, sweep.served));
  if (!failure.empty() && r.status != status_kind::fail) {
    r.status = status_kind::fail;
    r.check.status = status_kind::fail;
    r.check.message = failure;
    r.reason = "server scenario: " + failure;
  }
}

check_result generate_scenario::check(std::size_t i, std::size_t base, double tolerance, variant_result& r) {
  torch::NoGradGuard no_grad;
  auto& v = *variants_[i];
  auto& b = *variants_[base];
  check_result c;
  c.output = output_kind::logits;
  c.tolerance = tolerance;
  if (planted_ && *planted_ == cfg_.variants[i].name && v.tokens.size(0) > 0) {
    const int64_t step = std::min<int64_t>(3, v.tokens.size(1) - 1);
    const auto prompt = torch::tensor(data_.samples.front(), torch::kLong).unsqueeze(0).to(device_);
    const auto logits = teacher_forced_logits(b.model, prompt, b.tokens.narrow(0, 0, 1).to(device_), b.cache_dtype);
    v.tokens[0].narrow(0, step, v.tokens.size(1) - step).fill_(logits[0][step].argmin().item<int64_t>());
  }
  const token_comparison tc = compare_tokens(v.tokens, b.tokens);
  c.samples = tc.sequences;
  c.predictions_kept = tc.identical;
  c.top1_agreement = tc.token_agreement;
  // Both sides teacher-forced on the baseline's tokens, batch by batch, the same way; every step at
  // which they rank another token first is a changed decision (runner/generation_study.hpp).
  double diff2 = 0, ref2 = 0, max_abs = 0;
  int64_t nonfinite = 0;
  std::vector<generation_decision> decisions;
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> seen;  // (sequence, step, a, b)
  const auto decide = [&](generation_decision d) {
    if (seen.emplace(d.sequence, d.step, d.baseline_token, d.variant_token).second) decisions.push_back(d);
  };
  const auto forced = [&](generate_variant& who, const prompt_batch& pb) {
    const autocast_scope amp(who.autocast, device_.type());
    who.model->set_attention(who.how);
    std::vector<int64_t> rows(pb.samples.begin(), pb.samples.end());
    const auto toks = b.tokens.index_select(0, torch::tensor(rows, torch::kLong)).to(device_);
    return teacher_forced_logits(who.model, pb.ids, toks, who.cache_dtype, pb.pad).cpu().to(torch::kDouble);
  };
  for (const auto& pb : b.batches) {
    const auto ref = forced(b, pb);
    const auto out = forced(v, pb);
    nonfinite += (~torch::isfinite(out)).sum().item<int64_t>();
    diff2 += (out - ref).pow(2).sum().item<double>();
    ref2 += ref.pow(2).sum().item<double>();
    max_abs = std::max(max_abs, (out - ref).abs().max().item<double>());
    const auto a = ref.argmax(-1), bb = out.argmax(-1);  // (B, new)
    const auto changed = a.ne(bb).nonzero();             // (F, 2): row, step
    for (int64_t f = 0; f < changed.size(0); ++f) {
      const int64_t row = changed[f][0].item<int64_t>(), step = changed[f][1].item<int64_t>();
      decide({pb.samples[static_cast<std::size_t>(row)], step, a[row][step].item<int64_t>(),
              bb[row][step].item<int64_t>(), true});
    }
  }
  for (const auto& [sequence, step] : tc.divergences)
    decide({sequence, step, b.tokens[sequence][step].item<int64_t>(), v.tokens[sequence][step].item<int64_t>(), false});
  c.nonfinite = nonfinite;
  c.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.max_abs = max_abs;
  std::vector<std::string> problems;
  if (nonfinite > 0) problems.push_back(fmt::format("{} non-finite logits", nonfinite));
  if (!(c.rel_l2 <= tolerance))
    problems.push_back(fmt::format("teacher-forced logits rel. L2 {:.3g} > tolerance {:.3g}", c.rel_l2, tolerance));
  const int64_t forced_changes =
      std::count_if(decisions.begin(), decisions.end(), [](const generation_decision& d) { return d.teacher_forced; });
  int64_t excused = 0, study_sequences = 0;
  double study_seconds = 0;
  if (!decisions.empty()) {
    if (!evidence_) evidence_ = std::make_unique<generation_evidence>(model_, data_.samples, b.tokens, study_runs,
                                                                 study_max_memory(cfg_));
    const generation_study st = evidence_->study(plans_[i].precision.label, decisions);
    c.study_class = st.precision_class;
    const bool any_studied = std::find(st.studied.begin(), st.studied.end(), true) != st.studied.end();
    c.study_runs = any_studied ? st.runs : 0;
    c.study_note = st.unavailable;
    study_seconds = st.seconds;
    std::set<int64_t> studied;
    for (std::size_t j = 0; j < decisions.size(); ++j)
      if (st.studied[j]) studied.insert(decisions[j].sequence);
    study_sequences = static_cast<int64_t>(studied.size());
    std::set<int64_t> unexcused_sequences;
    double least = std::numeric_limits<double>::infinity();
    int64_t beyond = 0, unstudied = 0;
    std::vector<std::string> where_beyond, where_unstudied;
    for (std::size_t j = 0; j < decisions.size(); ++j) {
      if (st.excused[j]) {
        ++excused;
        c.decisive_margin = std::isnan(c.decisive_margin) ? st.margin[j] : std::max(c.decisive_margin, st.margin[j]);
        continue;
      }
      unexcused_sequences.insert(decisions[j].sequence);
      std::vector<std::string>& where = st.studied[j] ? where_beyond : where_unstudied;
      ++(st.studied[j] ? beyond : unstudied);
      if (st.studied[j]) least = std::min(least, st.margin[j]);
      if (where.size() < 5)
        where.push_back(fmt::format("sequence {} step {}{}", decisions[j].sequence, decisions[j].step,
                                    decisions[j].teacher_forced ? " (teacher-forced)" : ""));
    }
    // A sequence that left the baseline's tokens counts as excused when every change in it was.
    for (const auto& [sequence, step] : tc.divergences)
      if (!unexcused_sequences.count(sequence)) ++c.exempt_flips;
    if (beyond > 0)
      problems.push_back(fmt::format("{} of {} changed decisions beyond the float64 study's noise ({} runs at {}'s "
                                     "unit roundoff; least float64 margin among them {:.3g}): {}{}",
                                     beyond, decisions.size(), st.runs, st.precision_class, least,
                                     fmt::join(where_beyond, ", "), beyond > 5 ? ", …" : ""));
    if (unstudied > 0)
      problems.push_back(fmt::format("{} of {} changed decisions not studied, so none of them excused ({}): {}{}",
                                     unstudied, decisions.size(), st.unavailable, fmt::join(where_unstudied, ", "),
                                     unstudied > 5 ? ", …" : ""));
  }
  c.decisive_samples = c.samples - c.exempt_flips;
  c.top1_agreement_decisive = c.decisive_samples > 0 ? static_cast<double>(c.predictions_kept) /
                                                           static_cast<double>(c.decisive_samples)
                                                     : 1.0;
  if (tc.identical < tc.sequences && !problems.empty()) {
    std::vector<std::string> where;
    for (std::size_t k = 0; k < tc.divergences.size() && k < 5; ++k)
      where.push_back(fmt::format("sequence {} at step {}", tc.divergences[k].first, tc.divergences[k].second));
    problems.push_back(fmt::format("{} of {} sequences generated other tokens (first divergence: {}{})",
                                   tc.sequences - tc.identical, tc.sequences, fmt::join(where, ", "),
                                   tc.divergences.size() > 5 ? ", …" : ""));
  }
  c.status = problems.empty() ? status_kind::pass : status_kind::fail;
  c.message = fmt::format("{}", fmt::join(problems, "; "));
  set_metric(r.metrics, {"sequences_identical", static_cast<double>(tc.identical), metric_unit::count,
                         metric_direction::higher_is_better, "generate",
                         fmt::format("sequences whose {} greedy tokens equal the baseline's, of {}",
                                     cfg_.generate.max_new_tokens, tc.sequences),
                         ""});
  set_metric(r.metrics, {"changed_decisions", static_cast<double>(decisions.size()), metric_unit::count,
                         metric_direction::lower_is_better, "generate",
                         fmt::format("steps at which the variant chose another token than the baseline after the "
                                     "same prefix: {} teacher-forced, and each diverging sequence's first",
                                     forced_changes),
                         ""});
  if (!decisions.empty())
    set_metric(r.metrics, {"changed_decisions_excused", static_cast<double>(excused), metric_unit::count,
                           metric_direction::neither, "generate",
                           c.study_runs == 0
                               ? "none: " + c.study_note
                               : fmt::format("changed decisions within the float64 study's noise ({} runs at {}'s "
                                             "unit roundoff over the {} changed sequences studied, {:.1f} s; "
                                             "runner/generation_study.hpp){}",
                                             c.study_runs, c.study_class, study_sequences, study_seconds,
                                             c.study_note.empty() ? "" : "; the others: " + c.study_note),
                           ""});
  if (!tc.divergences.empty()) {
    int64_t first = tc.divergences.front().second;
    for (const auto& d : tc.divergences) first = std::min(first, d.second);
    set_metric(r.metrics, {"first_divergence_step", static_cast<double>(first), metric_unit::count,
                           metric_direction::neither, "generate",
                           "the earliest step (0 = the first new token) at which a sequence left the baseline's", ""});
  }
  return c;
}

void generate_scenario::finalize(std::size_t i, std::optional<std::size_t> base, variant_result& r) {
  const auto& v = *variants_[i];
  if (v.timed.empty()) return;
  if (v.offload) v.offload->annotate(r.offload);
  if (cfg_.scenario == "server" && base) serve(i, *base, r);
  std::vector<double> prefill, decode, ttft_pass, bandwidth;
  std::vector<double> steps, ttfts;
  const int64_t new_tokens = cfg_.generate.max_new_tokens;
  // Bytes a decode step reads at the middle of the decode (the mean context over the steps), per batch.
  double bytes_per_pass = 0;
  for (const auto& b : v.batches) {
    const int64_t context = b.ids.size(1) + new_tokens / 2;
    bytes_per_pass += static_cast<double>(new_tokens - 1) *
                      decode_bytes_per_step(v.model, b.ids.size(0), context,
                                            static_cast<int64_t>(c10::elementSize(v.cache_dtype)));
  }
  if (!(triad_gb_per_s_ > 0)) triad_gb_per_s_ = measure_triad_gb_per_s(device_);
  double prefill_flops = 0;
  // The useful work: each prompt at its own length (a padded batch computes more, and shows it here).
  for (const auto& b : v.batches)
    for (std::size_t k = 0; k < b.samples.size(); ++k)
      prefill_flops += decoder_prefill_flops(v.model, 1, b.ids.size(1) - (b.pad.empty() ? 0 : b.pad[k]));
  std::vector<double> prefill_gflops;
  for (const auto& p : v.timed) {
    prefill.push_back(p.prefill_tokens / (p.prefill_ms / 1e3));
    prefill_gflops.push_back(prefill_flops / (p.prefill_ms / 1e3) / 1e9);
    if (p.decode_ms > 0) {
      decode.push_back(p.decode_tokens / (p.decode_ms / 1e3));
      bandwidth.push_back((p.decode_bytes >= 0 ? p.decode_bytes : bytes_per_pass) / (p.decode_ms / 1e3) / 1e9);
    }
    ttft_pass.push_back(mean(p.ttft_ms));
    steps.insert(steps.end(), p.step_ms.begin(), p.step_ms.end());
    ttfts.insert(ttfts.end(), p.ttft_ms.begin(), p.ttft_ms.end());
  }
  const auto geo = [](const std::vector<double>& x) { return summarize(x).geomean; };
  // Data parallel: one worker's prefills run while the others decode, so neither phase has a time
  // of its own to divide by; the rates over the whole pass (sequences/s, generated_tokens_per_s) do.
  const bool parallel = v.workers != nullptr;
  const std::string overlapped =
      "n/a: data parallel: each worker's prefills overlap the other workers' decode steps, so the phase has no "
      "time of its own (generated_tokens_per_s is the whole's rate)";
  if (parallel) {
    prefill.clear();
    prefill_gflops.clear();
    decode.clear();
    bandwidth.clear();
  }
  set_metric(r.metrics, {"prefill_tokens_per_s", parallel ? not_a_number : geo(prefill), "tokens/s",
                         metric_direction::higher_is_better, "generate",
                         "prompt tokens over the prefill time (each batch's prompt forward and first argmax)",
                         parallel ? overlapped : values_interval_note(prefill, "tokens/s")});
  set_metric(r.metrics, {"prefill_gflops", parallel ? not_a_number : geo(prefill_gflops), "GFLOP/s",
                         metric_direction::higher_is_better, "generate",
                         "the prefill's FLOPs (block linears over every prompt token, causal attention's lower "
                         "triangle, the LM head at the last position) over the prefill time",
                         parallel ? overlapped : values_interval_note(prefill_gflops, "GFLOP/s")});
  // The products' dtype: int8-weight-only multiplies fp32 (its weights widened as read); int8
  // multiplies in int32, which has no float ceiling.
  const std::string gemm_dtype = plans_[i].precision.label == "int8-weight-only" ? "fp32" : plans_[i].precision.dtype;
  const double ceiling = measured_ceiling(env_, gemm_dtype);
  set_metric(r.metrics, {"prefill_ceiling_share", parallel ? not_a_number : geo(prefill_gflops) / ceiling,
                         metric_unit::share, metric_direction::higher_is_better, "generate",
                         fmt::format("prefill_gflops over the run's measured {} matmul ceiling", gemm_dtype),
                         parallel             ? overlapped
                         : ceiling == ceiling ? fmt::format("ceiling {:.4g} GFLOP/s", ceiling)
                                            : fmt::format("n/a: no {} matmul ceiling was measured{}", gemm_dtype,
                                                          gemm_dtype == "int8" ? " (int8 has no float GEMM ceiling)"
                                                                               : "")});
  const std::string no_decode = new_tokens < 2 ? "max_new_tokens is 1: no decode step" : parallel ? overlapped : "";
  set_metric(r.metrics, {"decode_tokens_per_s", decode.empty() ? not_a_number : geo(decode), "tokens/s",
                         metric_direction::higher_is_better, "generate",
                         "tokens after each sequence's first, over the decode steps' time (all sequences of a batch)",
                         decode.empty() ? no_decode : values_interval_note(decode, "tokens/s")});
  set_metric(r.metrics, {"time_to_first_token_ms", geo(ttft_pass), metric_unit::ms, metric_direction::lower_is_better,
                         "generate",
                         v.continuous ? "a request's own prefill and first token, mean over the requests of a pass"
                         : parallel   ? "a batch's prefill and first token in its worker (the other workers running "
                                        "beside it), mean over the batches of a pass"
                                      : "a batch's prefill and first token, mean over the batches of a pass",
                         values_interval_note(ttft_pass, "ms")});
  set_metric(r.metrics, {"inter_token_latency_p50_ms", steps.empty() ? not_a_number : percentile(steps, 50),
                         metric_unit::ms, metric_direction::lower_is_better, "generate",
                         "median decode step over every timed pass", steps.empty() ? no_decode : fmt::format("{} steps", steps.size())});
  set_metric(r.metrics, {"inter_token_latency_p99_ms", steps.empty() ? not_a_number : percentile(steps, 99),
                         metric_unit::ms, metric_direction::lower_is_better, "generate",
                         "99th-percentile decode step over every timed pass", steps.empty() ? no_decode : fmt::format("{} steps", steps.size())});
  set_metric(r.metrics, {"kv_cache_bytes", static_cast<double>(v.cache_bytes), metric_unit::bytes,
                         metric_direction::lower_is_better, "generate",
                         parallel ? "the workers' largest batches' KV caches together (each preallocated for prompt + "
                                    "max_new_tokens): what the workers hold at once at most"
                                  : "the largest batch's KV cache, preallocated for prompt + max_new_tokens",
                         ""});
  set_metric(r.metrics, {"decode_read_gb_per_s", bandwidth.empty() ? not_a_number : geo(bandwidth), "GB/s",
                         metric_direction::higher_is_better, "generate",
                         "weights + KV cache one decode step reads (at the mean context), over its time: to compare "
                         "with the memory bandwidth",
                         bandwidth.empty() ? no_decode : values_interval_note(bandwidth, "GB/s")});
  set_metric(r.metrics, {"memory_bandwidth_gb_per_s", triad_gb_per_s_, "GB/s", metric_direction::neither, "generate",
                         "the measured ceiling: a STREAM-style triad over 128 MiB float32 arrays at the run's threads, "
                         "best of 8",
                         ""});
  set_metric(r.metrics, {"decode_bandwidth_share", bandwidth.empty() ? not_a_number : geo(bandwidth) / triad_gb_per_s_,
                         metric_unit::share, metric_direction::higher_is_better, "generate",
                         "decode_read_gb_per_s over the triad's: how close decoding comes to the memory bound",
                         bandwidth.empty() ? no_decode : ""});
  set_metric(r.metrics, {"weight_bytes", static_cast<double>(decoder_weight_bytes(v.model)), metric_unit::bytes,
                         metric_direction::lower_is_better, "generate",
                         v.autocast ? "the weights as stored (fp32: autocast casts them per call), llama-bench's size"
                                     : "the weights as stored (int8 linears as int8 plus per-row scales), llama-bench's "
                                       "size",
                         parallel ? fmt::format("one copy's: each of the {} workers holds its own", v.shares.size())
                                  : ""});
  if (parallel) {
    // What is well-defined for the whole: every generated token over the pass's wall time, and each
    // sequence's first token after the common start (a worker's later batches wait for its earlier ones).
    std::vector<double> generated, first_token;
    const double tokens = static_cast<double>(data_.samples.size()) * static_cast<double>(new_tokens);
    for (const auto& p : v.timed) {
      generated.push_back(tokens / p.seconds);
      first_token.push_back(mean(p.first_token_ms));
    }
    set_metric(r.metrics, {"generated_tokens_per_s", geo(generated), "tokens/s", metric_direction::higher_is_better,
                           "generate",
                           "data parallel: every generated token (all workers') over the pass's wall time, from the "
                           "common start to the last worker's end",
                           values_interval_note(generated, "tokens/s")});
    set_metric(r.metrics, {"first_token_after_start_ms", geo(first_token), metric_unit::ms,
                           metric_direction::lower_is_better, "generate",
                           "data parallel: each sequence's first token after the pass's common start (a worker's "
                           "later batches wait for its earlier ones), mean over the sequences of a pass",
                           values_interval_note(first_token, "ms")});
    // The workers, as the encoder's data-parallel report names them (report/markdown_writer.cpp).
    parallel_info& pi = r.parallel;
    pi.used = true;
    pi.mode = "threads";
    pi.world_size = static_cast<int64_t>(v.shares.size());
    std::vector<std::vector<double>> pass_s;
    for (const auto& s : v.shares) pass_s.push_back(s.pass_s);
    pi.imbalance = median_imbalance(pass_s);
    const std::vector<int64_t> threads = v.workers->threads_seen();
    for (std::size_t w = 0; w < v.shares.size(); ++w) {
      const auto& s = v.shares[w];
      parallel_worker pw;
      pw.device = cfg_.variants[i].parallel->devices[w];
      pw.threads = threads[w];
      pw.samples = s.samples;
      pw.real_tokens = s.real_tokens;
      pw.batches = static_cast<int64_t>(s.batches.size());
      pw.median_s = s.pass_s.empty() ? not_a_number : percentile(s.pass_s, 50);
      pw.samples_per_s = static_cast<double>(s.samples) / pw.median_s;
      pi.workers.push_back(pw);
    }
  }
  if (v.continuous) {
    // What continuous batching did: rows per decode step, and how full its caches were.
    std::vector<double> rows, fill;
    int64_t peak = 0;
    for (const auto& p : v.timed)
      if (p.engine.steps > 0) {
        rows.push_back(static_cast<double>(p.engine.decode_tokens) / static_cast<double>(p.engine.steps));
        fill.push_back(p.engine.fill_sum / static_cast<double>(p.engine.steps));
        peak = std::max(peak, p.engine.peak_active);
      }
    if (!rows.empty()) r.mean_batch_size = mean(rows);
    set_metric(r.metrics, {"decode_rows_per_step", rows.empty() ? not_a_number : mean(rows), metric_unit::count,
                           metric_direction::neither, "generate",
                           fmt::format("continuous batching: sequences decoded together per step, mean over the "
                                       "steps (at most {})",
                                       v.continuous->slots),
                           rows.empty() ? no_decode : fmt::format("peak {}", peak)});
    set_metric(r.metrics, {"kv_cache_fill", fill.empty() ? not_a_number : mean(fill), metric_unit::share,
                           metric_direction::higher_is_better, "generate",
                           "continuous batching: filled over allocated KV-cache positions of the running sequences, "
                           "mean over the decode steps (each cache holds prompt + max_new_tokens; no padding)",
                           fill.empty() ? no_decode : ""});
  }
}

}  // namespace attnbench
