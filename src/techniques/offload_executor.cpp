#include "techniques/offload_executor.hpp"

#include <fmt/format.h>

#include "techniques/precision.hpp"
#include "techniques/recompute.hpp"

namespace attnbench {
namespace {

// The host copy of one parameter: a detached CPU clone, matrices in the autocast dtype when asked.
torch::Tensor host_copy(const torch::Tensor& p, const offload_config& cfg, c10::ScalarType compute,
                        bool pin) {
  auto t = p.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true).contiguous();
  if (cfg.host_in_compute_dtype && p.dim() >= 2 && compute != torch::kFloat) t = t.to(compute);
  return pin ? t.pin_memory() : t;
}

// The host weights of one encoder-layer parameter: the parameter itself when it already lives on
// the host in the dtype the host weights are kept in (page-locked in place when `pin`, so the
// model that owns it uses the page-locked memory too, and the host holds it once); otherwise a
// host copy. `shared` is cleared when a copy was made.
torch::Tensor host_weight(torch::Tensor& p, const offload_config& cfg, c10::ScalarType compute, bool pin,
                          bool& shared) {
  const bool cast = cfg.host_in_compute_dtype && p.dim() >= 2 && compute != torch::kFloat;
  if (p.device().is_cpu() && !cast) {
    if (pin && !p.is_pinned()) p.set_data(p.pin_memory());
    return p.detach();  // the same storage
  }
  shared = false;
  return host_copy(p, cfg, compute, pin);
}

// The model without its encoder layers (embeddings, pooler, classifier), with `model`'s values,
// on `device`.
EncoderClassifier resident_part(const EncoderClassifier& model, torch::Device device) {
  model_config shell = model->config();
  shell.layers = 0;
  EncoderClassifier out(shell);
  out->set_attention(model->attention());
  const auto params = model->named_parameters(/*recurse=*/true);
  for (auto& p : out->named_parameters(/*recurse=*/true)) {
    const torch::Tensor* src = params.find(p.key());
    TORCH_CHECK(src != nullptr, "offload: the model has no parameter ", p.key());
    p.value().copy_(*src);
  }
  const auto buffers = model->named_buffers(/*recurse=*/true);
  for (auto& b : out->named_buffers(/*recurse=*/true)) {
    const torch::Tensor* src = buffers.find(b.key());
    TORCH_CHECK(src != nullptr, "offload: the model has no buffer ", b.key());
    b.value().copy_(*src);
  }
  out->eval();
  out->to(device);
  return out;
}

std::string host_dtype_name(const offload_config& cfg, const resolved_precision& p) {
  if (!cfg.host_in_compute_dtype || !p.autocast) return "fp32";
  return p.dtype + " matrices";
}

}  // namespace

std::optional<std::string> offload_skip_reason(const offload_config& offload, torch::Device device) {
  if (offload.target == "cpu" || device.is_cuda()) return std::nullopt;
  return fmt::format(
      "needs an accelerator: offloading streams weights from host memory to a GPU, and this run's device is "
      "{} "
      "(set offload.target to \"cpu\" to exercise the mechanism on the CPU)",
      device.str());
}

offload_executor::offload_executor(EncoderClassifier model, torch::Device device,
                                   const variant_config& variant, const variant_plan& plan, bool causal)
    : device_(device),
      precision_(plan.precision),
      how_{variant.attention, variant.backend, causal, variant.kernel},
      cfg_(*variant.offload) {
  TORCH_CHECK(!offload_skip_reason(cfg_, device_), "offload: ", *offload_skip_reason(cfg_, device_));
  torch::NoGradGuard no_grad;
  const int64_t layers = model->num_layers();
  TORCH_CHECK(layers > 0, "offload: the model has no encoder layers");
  const bool pin = cfg_.pinned && device_.is_cuda();
  const auto compute = precision_.autocast.value_or(c10::ScalarType::Float);
  std::vector<std::vector<torch::Tensor>> host;
  shares_host_weights_ = true;
  for (int64_t i = 0; i < layers; ++i) {
    std::vector<torch::Tensor> params;
    for (auto& p : model->layer(i)->parameters())
      params.push_back(host_weight(p, cfg_, compute, pin, shares_host_weights_));
    host.push_back(std::move(params));
  }
  for (const auto& p : model->parameters()) full_bytes_ += static_cast<int64_t>(p.nbytes());
  resident_ = resident_part(model, device_);
  resident_bytes_ = bytes_of(resident_->parameters());
  streamer_ =
      std::make_unique<layer_streamer>(model->config(), std::move(host), device_, cfg_.prefetch, pin);
}

std::vector<torch::Tensor> offload_executor::device_parameters() const {
  std::vector<torch::Tensor> out = resident_->parameters();
  const auto slots = streamer_->slot_parameters();
  out.insert(out.end(), slots.begin(), slots.end());
  return out;
}

offload_executor::~offload_executor() = default;

torch::Tensor offload_executor::do_forward(const batch& b) {
  const autocast_scope amp(precision_.autocast, device_.type());
  // A slot is refilled with the next layers' weights: a cached autocast copy of it would be stale.
  const autocast_cache_off no_cache;
  const bool padded = b.real_tokens < b.input_ids.numel();
  const attention_mask mask =
      make_attention_mask(padded ? b.padding_mask : torch::Tensor(), how_.causal, how_.kind);
  streamer_->clear_schedule();
  streamer_->forget_resident();
  ++forwards_;
  const int64_t layers = streamer_->layers();
  auto x = resident_->embed(b.input_ids);  // (B, S, H)
  int64_t next_load = 0;
  for (int64_t i = 0; i < layers; ++i) {
    // Issue the copies up to layer i + prefetch before layer i computes: they overlap it.
    for (; next_load <= std::min(i + cfg_.prefetch, layers - 1); ++next_load) streamer_->load(next_load);
    EncoderLayer layer = streamer_->wait_for(i, "run");
    RECORD_USER_SCOPE("encoder.layer");
    x = layer->forward(x, mask, how_);  // (B, S, H)
    streamer_->release(i);
  }
  return resident_->head(x, padded ? b.padding_mask : torch::Tensor());  // (B, num_labels) or (B, hidden)
}

void offload_executor::do_annotate(variant_result& r) {
  offload_info& o = r.offload;
  o.host_dtype = host_dtype_name(cfg_, precision_);
  o.prefetch = cfg_.prefetch;
  o.full_weight_bytes = full_bytes_;
  o.resident_weight_bytes = resident_bytes_ + streamer_->resident_bound() * streamer_->slot_bytes();
  o.bytes_per_pass = streamer_->layers() * streamer_->layer_bytes() * r.batches;
  o.d2h_bytes_per_pass = 0;
  streamer_->annotate(o, r.batches, forwards_);
}

}  // namespace attnbench
