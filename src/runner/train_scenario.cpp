#include "runner/train_scenario.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "core/device.hpp"
#include "model/encoder.hpp"
#include "model/flops.hpp"
#include "runner/memory_tracker.hpp"
#include "runner/planner_calibration.hpp"
#include "techniques/checkpointing.hpp"
#include "techniques/offload_executor.hpp"
#include "techniques/offload_trainer.hpp"
#include "techniques/precision.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {

struct train_variant {
  const variant_config* cfg = nullptr;
  std::optional<c10::ScalarType> autocast;  // its plan's
  EncoderClassifier model{nullptr};
  std::vector<torch::Tensor> initial;  // the initial weights, restored before every pass
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::unique_ptr<offload_trainer> offload;  // set for an offload variant: streams the encoder layers
  std::vector<batch> batches;
  std::vector<torch::Tensor> labels;  // per batch: (B) int64 on the device
  // from the check pass, float64 on the CPU
  torch::Tensor losses;   // (steps)
  torch::Tensor grads;    // every parameter's last-step gradient, flattened
  torch::Tensor weights;  // every parameter after the last step, flattened
};

namespace {

// A training step's FLOPs: forward, then backward's two matmuls per forward matmul (gradients of
// the inputs and of the weights). Recomputation by checkpointing is not counted: it is overhead,
// and shows up as lower achieved GFLOP/s.
constexpr double train_flops_per_forward = 3;

// The bytes of the tensors held on `device`: what the run's device keeps. Offloaded layers'
// weights, gradients and optimizer state are in host memory, so on an accelerator they are not
// counted; on a CPU run everything is.
int64_t bytes_of(const std::vector<torch::Tensor>& ts, torch::Device device) {
  int64_t n = 0;
  for (const auto& t : ts)
    if (t.defined() && t.device().type() == device.type()) n += static_cast<int64_t>(t.nbytes());
  return n;
}

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
  synchronize(device);
  const auto t0 = pass_clock::now();
  for (std::size_t k = 0; k < v.batches.size(); ++k) {
    const auto ts = pass_clock::now();
    const batch& b = v.batches[k];
    v.optimizer->zero_grad(/*set_to_none=*/false);
    const int64_t level = memory ? memory->current_bytes() : 0;
    if (memory) memory->reset_peak();
    torch::Tensor loss;
    {
      const autocast_scope amp(v.autocast, device.type());
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
void run_check_pass(train_variant& v, variant_result& r, const train_config& tc, torch::Device device) {
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
  train_result& t = *r.train;
  t.weight_bytes = bytes_of(params, device);
  if (v.offload) t.weight_bytes += v.offload->resident_bound() * v.offload->layer_bytes();  // the slots
  t.gradient_bytes = bytes_of(grads, device);
  t.optimizer_state_bytes = optimizer_state_bytes(*v.optimizer, device);
  t.activation_peak_bytes = rec.activation_peak;
  // Weights and gradients were allocated before the scope opened: add them for the total.
  r.peak_memory_bytes = rec.peak < 0 ? -1 : rec.peak + t.weight_bytes + t.gradient_bytes;
  r.peak_memory_method = method + " (+ weights and gradients)";
  v.losses = flat(rec.losses);
  v.grads = flat(grads);
  v.weights = flat(params);
  for (int64_t i = 0; i < v.losses.numel(); ++i) t.losses.push_back(v.losses[i].item<double>());
}

// Losses, gradients and weights against the baseline's, each within the precision's tolerance.
check_result check_against(const train_variant& v, const train_variant& base, double tolerance,
                           variant_result& r) {
  check_result c;
  c.tolerance = tolerance;
  c.nonfinite = (~torch::isfinite(v.losses)).sum().item<int64_t>() +
                (~torch::isfinite(v.grads)).sum().item<int64_t>() +
                (~torch::isfinite(v.weights)).sum().item<int64_t>();
  train_result& t = *r.train;
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

// The variant's batches on the device with their labels, and the per-pass work they make.
void build_batches(train_variant& v, const config& cfg, const dataset& data, const torch::Tensor& labels,
                   const batching_base& batching, torch::Device device, variant_result& r) {
  const auto n_samples = static_cast<int64_t>(data.samples.size());
  std::vector<int64_t> rows(static_cast<std::size_t>(n_samples));
  for (int64_t s = 0; s < n_samples; ++s) rows[static_cast<std::size_t>(s)] = s;
  const auto plans = batching.plan(data, rows);
  input_assembler assemble(data, device, /*pool=*/false);
  double flops = 0;
  for (const auto& p : plans) {
    v.batches.push_back(assemble.assemble(p));
    const batch& b = v.batches.back();
    v.labels.push_back(labels.index_select(0, torch::tensor(b.sample_index, torch::kLong)).to(device));
    r.real_tokens += b.real_tokens;
    r.computed_tokens += p.padded_tokens();
    flops += train_flops_per_forward *
             forward_flops(cfg.model, static_cast<int64_t>(p.rows.size()), p.padded_length);
  }
  r.batches = static_cast<int64_t>(plans.size());
  r.flops_per_pass = flops;
  r.padding_efficiency = static_cast<double>(r.real_tokens) / static_cast<double>(r.computed_tokens);
  r.mean_batch_size = static_cast<double>(n_samples) / static_cast<double>(plans.size());
}

// Its own model: the same seed gives every variant the same initial weights; offload or
// checkpointing wrap its layers before the optimizer exists.
void build_model(train_variant& v, const config& cfg, torch::Device device) {
  const variant_config& vc = *v.cfg;
  v.model = EncoderClassifier(cfg.model);
  v.model->init_weights(cfg.model.seed);
  v.model->set_attention({vc.attention, vc.backend, cfg.model.causal, vc.kernel});
  v.model->set_dropout(cfg.train.dropout);
  if (cfg.train.dropout > 0)
    v.model->train();
  else
    v.model->eval();  // dropout is the model's only train/eval difference
  if (vc.offload) {
    // Only what stays resident goes to the device: the encoder layers go from the host straight to
    // being the host master weights (offload_trainer), never all on the device at once.
    for (const auto& child : v.model->named_children())
      if (child.key() != "layers") child.value()->to(device);
    v.offload = std::make_unique<offload_trainer>(v.model, device, vc);
  } else {
    v.model->to(device);
    apply_checkpointing(v.model, vc.checkpointing);
  }
  for (const auto& p : v.model->parameters()) v.initial.push_back(p.detach().clone());
}

}  // namespace

train_scenario::train_scenario(const config& cfg, std::vector<variant_plan> plans, const dataset& data,
                               torch::Device device)
    : cfg_(cfg), plans_(std::move(plans)), data_(data), device_(device), variants_(cfg.variants.size()) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(cfg.train.seed);
  const auto n_samples = static_cast<int64_t>(data.samples.size());
  labels_ = at::randint(cfg.model.num_labels, {n_samples}, gen, torch::TensorOptions(torch::kLong));
}

train_scenario::~train_scenario() = default;

std::optional<skip_verdict> train_scenario::skip_reason(std::size_t i, variant_result& /*r*/) {
  const variant_config& vc = cfg_.variants[i];
  if (vc.pipeline)
    return skip_verdict{"the pipeline runs in inference only: the train scenario has no pipelined backward",
                        vc.description};
  if (const auto& why = plans_[i].skip_reason) return skip_verdict{*why, vc.description};
  return std::nullopt;
}

void train_scenario::prepare(std::size_t i, variant_result& r) {
  const variant_config& vc = cfg_.variants[i];
  train_variant& v = variants_[i];
  v.cfg = &vc;
  v.autocast = plans_[i].precision.autocast;
  // The train scenario plans with the default per-batch overhead: no calibration runs here.
  const auto batching =
      make_batching(vc.batching, cfg_.workload.max_length, default_planner_calibration(cfg_.model).model);
  r.batching = batching->describe();
  train_result t;
  // Offloading recomputes every layer in backward (the parser refuses a checkpointing block on top).
  t.checkpointing = vc.offload ? "every layer, by offload (recomputed in backward)"
                               : describe_checkpointing(vc.checkpointing, cfg_.model.layers);
  t.dropout = cfg_.train.dropout;
  std::string offloaded;
  if (vc.offload)
    offloaded =
        fmt::format(", encoder layers offloaded to host memory{} (prefetch {})",
                    vc.offload->target == "cpu" ? ", streamed into CPU buffers" : "", vc.offload->prefetch);
  r.description = !vc.description.empty() ? vc.description
                  : r.is_baseline         ? "the baseline"
                                  : fmt::format("{}, {}, {}, checkpointing {}{}", r.precision, r.attention,
                                                r.batching, t.checkpointing, offloaded);
  build_batches(v, cfg_, data_, labels_, *batching, device_, r);
  t.steps = r.batches;
  r.train = t;
  build_model(v, cfg_, device_);
}

void train_scenario::check_pass(std::size_t i, variant_result& r) {
  run_check_pass(variants_[i], r, cfg_.train, device_);
}

// Every pass starts from a reset, before its clock starts.
pass_timing train_scenario::pass(std::size_t i, pass_phase /*phase*/) {
  train_variant& v = variants_[i];
  reset(v, cfg_.train);
  pass_record rec = train_pass(v, device_, nullptr);
  return pass_timing{rec.seconds, std::move(rec.step_ms)};
}

check_result train_scenario::check(std::size_t i, std::size_t base, double tolerance, variant_result& r) {
  return check_against(variants_[i], variants_[base], tolerance, r);
}

void train_scenario::finalize(std::size_t i, std::optional<std::size_t> /*base*/, variant_result& r) {
  if (variants_[i].offload) variants_[i].offload->annotate(r);
}

}  // namespace attnbench
