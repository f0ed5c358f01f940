#include "runner/train_scenario.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "model/encoder.hpp"
#include "model/flops.hpp"
#include "core/device.hpp"
#include "runner/memory_tracker.hpp"
#include "runner/pass_statistics.hpp"
#include "runner/timed_rounds.hpp"
#include "runner/variant_traits.hpp"
#include "stats/summary.hpp"
#include "techniques/checkpointing.hpp"
#include "techniques/offload_executor.hpp"
#include "techniques/offload_trainer.hpp"
#include "techniques/precision.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;

// A training step's FLOPs: forward, then backward's two matmuls per forward matmul (gradients of
// the inputs and of the weights). Recomputation by checkpointing is not counted: it is overhead,
// and shows up as lower achieved GFLOP/s.
constexpr double train_flops_per_forward = 3;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The bytes of the tensors held on `device`: what the run's device keeps. Offloaded layers'
// weights, gradients and optimizer state are in host memory, so on an accelerator they are not
// counted; on a CPU run everything is.
int64_t bytes_of(const std::vector<torch::Tensor>& ts, torch::Device device) {
  int64_t n = 0;
  for (const auto& t : ts)
    if (t.defined() && t.device().type() == device.type()) n += static_cast<int64_t>(t.nbytes());
  return n;
}

struct train_variant {
  const variant_config* cfg = nullptr;
  variant_result result;
  EncoderClassifier model{nullptr};
  std::vector<torch::Tensor> initial;  // the initial weights, restored before every pass
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::unique_ptr<offload_trainer> offload;  // set for an offload variant: streams the encoder layers
  std::vector<batch> batches;
  std::vector<torch::Tensor> labels;  // per batch: (B) int64 on the device
  std::vector<double> pass_s;         // timed passes
  std::vector<double> step_ms;        // every timed step
  // from the check pass, float64 on the CPU
  torch::Tensor losses;   // (steps)
  torch::Tensor grads;    // every parameter's last-step gradient, flattened
  torch::Tensor weights;  // every parameter after the last step, flattened
  bool runnable = false;
};

struct pass_record {
  double seconds = 0;
  std::vector<double> step_ms;
  std::vector<torch::Tensor> losses;  // scalars, read after the pass (no sync per step)
  int64_t activation_peak = -1;       // measured passes only
  int64_t peak = -1;                  // highest level over the pass, relative to its start
};

// Puts the variant back at the starting line: initial weights, zeroed (allocated) gradients, a
// fresh AdamW, the dropout seed.
void reset(train_variant& v, const train_config& tc) {
  {
    torch::NoGradGuard no_grad;
    auto params = v.model->parameters();
    for (std::size_t i = 0; i < params.size(); ++i) {
      params[i].copy_(v.initial[i]);
      if (params[i].grad().defined())
        params[i].mutable_grad().zero_();
      else
        params[i].mutable_grad() = torch::zeros_like(params[i]);
    }
  }
  v.optimizer.reset();  // free the old state before the new optimizer exists
  v.optimizer = std::make_unique<torch::optim::AdamW>(
      v.model->parameters(), torch::optim::AdamWOptions(tc.learning_rate).weight_decay(tc.weight_decay));
  torch::manual_seed(tc.seed);
}

pass_record train_pass(train_variant& v, torch::Device device, peak_memory_scope* memory) {
  pass_record rec;
  const precision_kind precision = v.cfg->precision;
  synchronize(device);
  const auto t0 = clock_type::now();
  for (std::size_t k = 0; k < v.batches.size(); ++k) {
    const auto ts = clock_type::now();
    const batch& b = v.batches[k];
    v.optimizer->zero_grad(/*set_to_none=*/false);
    const int64_t level = memory ? memory->current_bytes() : 0;
    if (memory) memory->reset_peak();
    torch::Tensor loss;
    {
      const autocast_scope amp(precision, device.type());
      // A batch without padding passes no mask, as in inference.
      const bool padded = b.real_tokens < b.input_ids.numel();
      auto logits = v.model->forward(b.input_ids, padded ? b.padding_mask : torch::Tensor());  // (B, C) float
      loss = torch::nn::functional::cross_entropy(logits, v.labels[k]);
    }
    loss.backward();
    if (memory) {
      rec.activation_peak = std::max(rec.activation_peak, memory->peak_bytes() - level);
      rec.peak = std::max(rec.peak, memory->peak_bytes());
    }
    v.optimizer->step();
    rec.losses.push_back(loss.detach());
    if (device.is_cuda()) synchronize(device);
    rec.step_ms.push_back(seconds_since(ts) * 1e3);
  }
  synchronize(device);
  rec.seconds = seconds_since(t0);
  if (memory) rec.peak = std::max(rec.peak, memory->peak_bytes());
  return rec;
}

torch::Tensor flat(const std::vector<torch::Tensor>& ts) {
  std::vector<torch::Tensor> parts;
  for (const auto& t : ts) parts.push_back(t.detach().to(torch::kCPU, torch::kDouble).reshape(-1));
  return torch::cat(parts);
}

double rel_l2(const torch::Tensor& a, const torch::Tensor& ref) {
  const double denom = ref.norm().item<double>();
  const double num = (a - ref).norm().item<double>();
  return denom > 0 ? num / denom : (num == 0 ? 0 : std::numeric_limits<double>::infinity());
}

int64_t optimizer_state_bytes(torch::optim::AdamW& opt, torch::Device device) {
  int64_t n = 0;
  for (const auto& [key, state] : opt.state()) {
    const auto& s = static_cast<const torch::optim::AdamWParamState&>(*state);
    n += bytes_of({s.exp_avg(), s.exp_avg_sq(), s.max_exp_avg_sq()}, device);
  }
  return n;
}

// The untimed first pass: memory, losses, gradients and weights for the check.
void check_pass(train_variant& v, const train_config& tc, torch::Device device) {
  reset(v, tc);
  pass_record rec;
  std::string method;
  {
    peak_memory_scope memory(device);
    rec = train_pass(v, device, &memory);
    method = memory.method();
  }
  auto params = v.model->parameters();
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) grads.push_back(p.grad());
  train_result& t = *v.result.train;
  t.weight_bytes = bytes_of(params, device);
  if (v.offload) t.weight_bytes += v.offload->resident_bound() * v.offload->layer_bytes();  // the slots
  t.gradient_bytes = bytes_of(grads, device);
  t.optimizer_state_bytes = optimizer_state_bytes(*v.optimizer, device);
  t.activation_peak_bytes = rec.activation_peak;
  // Weights and gradients were allocated before the scope opened: add them for the total.
  v.result.peak_memory_bytes = rec.peak < 0 ? -1 : rec.peak + t.weight_bytes + t.gradient_bytes;
  v.result.peak_memory_method = method + " (+ weights and gradients)";
  v.losses = flat(rec.losses);
  v.grads = flat(grads);
  v.weights = flat(params);
  for (int64_t i = 0; i < v.losses.numel(); ++i) t.losses.push_back(v.losses[i].item<double>());
}

// Losses, gradients and weights against the baseline's, each within the precision's tolerance.
check_result check_against(train_variant& v, const train_variant& base, double tolerance) {
  check_result c;
  c.tolerance = tolerance;
  c.nonfinite = (~torch::isfinite(v.losses)).sum().item<int64_t>() +
                (~torch::isfinite(v.grads)).sum().item<int64_t>() +
                (~torch::isfinite(v.weights)).sum().item<int64_t>();
  train_result& t = *v.result.train;
  t.loss_rel_err = rel_l2(v.losses, base.losses);
  t.grad_rel_l2 = rel_l2(v.grads, base.grads);
  t.weight_rel_l2 = rel_l2(v.weights, base.weights);
  c.rel_l2 = std::max({t.loss_rel_err, t.grad_rel_l2, t.weight_rel_l2});
  c.max_abs = std::max((v.grads - base.grads).abs().max().item<double>(),
                       (v.weights - base.weights).abs().max().item<double>());
  c.cosine =
      torch::nn::functional::cosine_similarity(v.grads.unsqueeze(0), base.grads.unsqueeze(0)).item<double>();
  std::vector<std::string> over;
  if (c.nonfinite > 0) over.push_back(fmt::format("{} non-finite values", c.nonfinite));
  const auto within = [&](const char* what, double err) {
    if (!(err <= tolerance)) over.push_back(fmt::format("{} rel. L2 {:.3e} > {:.1e}", what, err, tolerance));
  };
  within("loss", t.loss_rel_err);
  within("gradients", t.grad_rel_l2);
  within("weights", t.weight_rel_l2);
  c.status = over.empty() ? status_kind::pass : status_kind::fail;
  for (const auto& o : over) c.message += (c.message.empty() ? "" : "; ") + o;
  return c;
}

void fail(variant_result& r, const std::string& why) {
  r.status = status_kind::fail;
  r.reason = why;
  r.check.status = status_kind::fail;
  r.check.message = why;
}

std::string error_text(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  return c10_error ? c10_error->what_without_backtrace() : e.what();
}

}  // namespace

void run_train_scenario(const config& cfg, const dataset& data, torch::Device device, run_result& res,
                        const train_progress& progress) {
  // The caller runs inference under InferenceMode; training needs autograd back.
  const c10::InferenceMode training(/*enabled=*/false);
  const train_config& tc = cfg.train;
  const auto n_samples = static_cast<int64_t>(data.samples.size());
  // Seeded synthetic labels, one per sample, independent of batching.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(tc.seed);
  const torch::Tensor all_labels =
      at::randint(cfg.model.num_labels, {n_samples}, gen, torch::TensorOptions(torch::kLong));

  std::vector<train_variant> variants(cfg.variants.size());
  int64_t done = 0;
  for (std::size_t i = 0; i < cfg.variants.size(); ++i) {
    const variant_config& vc = cfg.variants[i];
    train_variant& v = variants[i];
    variant_result& r = v.result;
    v.cfg = &vc;
    r.name = vc.name;
    r.is_baseline = vc.name == cfg.baseline;
    r.precision = precision_label(vc);
    r.attention = to_string(vc.attention);
    r.sdpa_backend = vc.attention == attention_kind::sdpa ? to_string(vc.backend) : "";
    if (vc.pending) {
      r.status = status_kind::skipped;
      r.reason = *vc.pending;
      r.description = vc.description.empty() ? "not implemented yet" : vc.description;
      r.check.message = "not run";
      continue;
    }
    if (vc.pipeline) {
      r.status = status_kind::skipped;
      r.reason = "the pipeline runs in inference only: the train scenario has no pipelined backward";
      r.description = vc.description;
      r.check.message = "not run";
      continue;
    }
    if (vc.offload) {
      if (auto why = offload_skip_reason(*vc.offload, device)) {
        r.status = status_kind::skipped;
        r.reason = *why;
        r.description = vc.description;
        r.check.message = "not run";
        continue;
      }
    }
    const auto batching = make_batching(vc.batching, cfg.workload.max_length);
    r.batching = batching->describe();
    train_result t;
    // Offloading recomputes every layer in backward (the parser refuses a checkpointing block on top).
    t.checkpointing = vc.offload ? "every layer, by offload (recomputed in backward)"
                                 : describe_checkpointing(vc.checkpointing, cfg.model.layers);
    t.dropout = tc.dropout;
    std::string offloaded;
    if (vc.offload)
      offloaded = fmt::format(", encoder layers offloaded to host memory{} (prefetch {})",
                              vc.offload->target == "cpu" ? ", streamed into CPU buffers" : "",
                              vc.offload->prefetch);
    r.description = !vc.description.empty() ? vc.description
                    : r.is_baseline         ? "the baseline"
                                    : fmt::format("{}, {}, {}, checkpointing {}{}", r.precision, r.attention,
                                                  r.batching, t.checkpointing, offloaded);
    std::vector<int64_t> rows(static_cast<std::size_t>(n_samples));
    for (int64_t s = 0; s < n_samples; ++s) rows[static_cast<std::size_t>(s)] = s;
    const auto plans = batching->plan(data, rows);
    input_assembler assemble(data, device, /*pool=*/false);
    double flops = 0;
    for (const auto& p : plans) {
      v.batches.push_back(assemble.assemble(p));
      const batch& b = v.batches.back();
      v.labels.push_back(all_labels.index_select(0, torch::tensor(b.sample_index, torch::kLong)).to(device));
      r.real_tokens += b.real_tokens;
      r.computed_tokens += p.padded_tokens();
      flops += train_flops_per_forward *
               forward_flops(cfg.model, static_cast<int64_t>(p.rows.size()), p.padded_length);
    }
    r.batches = static_cast<int64_t>(plans.size());
    r.flops_per_pass = flops;
    r.padding_efficiency = static_cast<double>(r.real_tokens) / static_cast<double>(r.computed_tokens);
    r.mean_batch_size = static_cast<double>(n_samples) / static_cast<double>(plans.size());
    t.steps = r.batches;
    r.train = t;

    // Its own model: the same seed gives every variant the same initial weights.
    v.model = EncoderClassifier(cfg.model);
    v.model->init_weights(cfg.model.seed);
    v.model->set_attention({vc.attention, vc.backend, cfg.model.causal});
    v.model->set_dropout(tc.dropout);
    if (tc.dropout > 0)
      v.model->train();
    else
      v.model->eval();  // dropout is the model's only train/eval difference
    v.model->to(device);
    try {
      if (vc.offload)
        v.offload = std::make_unique<offload_trainer>(v.model, device, vc);  // before the optimizer exists
      else
        apply_checkpointing(v.model, vc.checkpointing);
    } catch (const std::exception& e) {
      fail(r, "could not set up: " + error_text(e));
      continue;
    }
    for (const auto& p : v.model->parameters()) v.initial.push_back(p.detach().clone());

    progress("check", vc.name, done++, static_cast<int64_t>(cfg.variants.size()));
    try {
      check_pass(v, tc, device);
      v.runnable = true;
    } catch (const std::exception& e) {
      fail(r, "could not train: " + error_text(e));
    }
  }

  // --- warm-up, then timed rounds interleaved across variants; every pass from a reset ---
  const auto guarded = [&](train_variant& v, const char* phase) -> std::optional<pass_record> {
    try {
      reset(v, tc);
      return train_pass(v, device, nullptr);
    } catch (const std::exception& e) {
      v.runnable = false;
      fail(v.result, fmt::format("failed during a {} pass: {}", phase, error_text(e)));
      return std::nullopt;
    }
  };
  std::vector<round_member> members;
  std::vector<train_variant*> member_of;
  for (auto& v : variants) {
    if (!v.runnable) continue;
    round_member mb;
    mb.name = v.cfg->name;
    mb.is_baseline = v.cfg->name == cfg.baseline;
    train_variant* tv = &v;
    mb.pass = [tv, &guarded](pass_phase phase) -> std::optional<double> {
      const auto rec = guarded(*tv, phase == pass_phase::timed ? "timed" : "warm-up");
      if (!rec) return std::nullopt;
      if (phase == pass_phase::timed)
        tv->step_ms.insert(tv->step_ms.end(), rec->step_ms.begin(), rec->step_ms.end());
      return rec->seconds;
    };
    members.push_back(std::move(mb));
    member_of.push_back(tv);
  }
  const rounds_outcome rounds =
      run_rounds(cfg.measure, members, progress, [](int64_t /*round*/, bool more) { return more; });
  for (std::size_t i = 0; i < members.size(); ++i) member_of[i]->pass_s = std::move(members[i].pass_s);

  // --- statistics and the check against the baseline ---
  const train_variant& base = *std::find_if(
      variants.begin(), variants.end(), [&](const train_variant& v) { return v.cfg->name == cfg.baseline; });
  const std::vector<double> base_throughput = per_second(base.pass_s, static_cast<double>(n_samples));
  for (auto& v : variants) {
    variant_result& r = v.result;
    if (v.offload) v.offload->annotate(r);
    if (v.runnable) {
      summarize_passes(r, v.pass_s, static_cast<double>(n_samples), static_cast<double>(r.real_tokens),
                       base_throughput, base.runnable);
      r.latency_ms =
          latency_summary{percentile(v.step_ms, 50), percentile(v.step_ms, 90), percentile(v.step_ms, 99)};
      r.achieved_gflops = r.flops_per_pass * r.throughput.geomean / static_cast<double>(n_samples) / 1e9;
      r.ceiling_share = r.achieved_gflops / ceiling_for(res.environment, *v.cfg);
      if (base.runnable) {
        r.check = check_against(v, base, tolerance_for(cfg, *v.cfg));
      } else {
        r.check.status = status_kind::fail;
        r.check.message = "the baseline could not run, so nothing can be checked";
      }
      r.status = r.check.status;
      if (r.status == status_kind::fail) r.reason = r.check.message;
    }
    res.variants.push_back(std::move(r));
  }
  record_repetitions(cfg.measure, rounds, res);
}

}  // namespace attnbench
