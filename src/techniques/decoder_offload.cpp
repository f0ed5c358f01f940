#include "techniques/decoder_offload.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace attnbench {
std::optional<std::string> decoder_offload_skip_reason(const offload_config& offload, torch::Device device,
                                                       const std::string& precision_label) {
  if (offload.target != "cpu") {
    if (!device.is_cuda())
      return fmt::format("needs an accelerator: offloading streams weights from host memory to a GPU, and this run's "
                         "device is {} (set offload.target to \"cpu\" to exercise the mechanism on the CPU)",
                         device.str());
    return std::string("decoder offloading streams to the CPU only (offload.target \"cpu\"); streaming a decoder's "
                       "blocks to a GPU is not built yet");
  }
  if (!device.is_cpu()) return std::string("offload.target \"cpu\" needs the run's device to be the CPU");
  if (offload.host_in_compute_dtype)
    return std::string("decoder offloading keeps the host blocks in the variant's dtype; \"host_dtype\": \"compute\" "
                       "is the encoder executor's");
  if (precision_label == "int8" || precision_label == "int8-weight-only")
    return fmt::format("decoder offloading streams plain linears; {}'s packed int8 linears are not streamed",
                       precision_label);
  return std::nullopt;
}

decoder_offload::decoder_offload(DecoderLM model, const offload_config& cfg)
    : model_(std::move(model)), prefetch_(cfg.prefetch) {
  // Normal tensors for the slots, even when the run prepares variants in inference mode:
  // generation refills them outside it (runner/generate_scenario.cpp runs under no-grad).
  const c10::InferenceMode normal_tensors{/*enabled=*/false};
  torch::NoGradGuard no_grad;
  const decoder_dims d = model_->dims();
  std::vector<std::vector<torch::Tensor>> host;
  int64_t block_bytes = 0;
  for (int64_t i = 0; i < d.layers; ++i) {
    host.push_back(model_->block(static_cast<std::size_t>(i)).parameters());
    block_bytes += bytes_of(host.back());
  }
  full_bytes_ = bytes_of(model_->parameters());
  resident_bytes_ = full_bytes_ - block_bytes;
  streamer_ = std::make_unique<layer_streamer>(
      [d] { return std::static_pointer_cast<torch::nn::Module>(std::make_shared<DecoderBlockImpl>(d)); },
      std::move(host), torch::kCPU, prefetch_, /*pinned=*/false);
  // Slots that require no grad: autocast caches no low-precision copy of them ("amp"), which
  // would go stale when the slot is refilled with the next block.
  for (auto& p : streamer_->slot_parameters()) p.requires_grad_(false);
  DecoderLMImpl::block_source source;
  source.acquire = [this](std::size_t layer) -> DecoderBlockImpl& { return acquire(layer); };
  source.release = [this](std::size_t layer) { streamer_->release(static_cast<int64_t>(layer)); };
  model_->set_block_source(std::move(source));
}

decoder_offload::~decoder_offload() { model_->set_block_source({}); }

DecoderBlockImpl& decoder_offload::acquire(std::size_t layer) {
  const int64_t i = static_cast<int64_t>(layer), layers = streamer_->layers();
  if (i == 0) {  // a new forward
    streamer_->clear_schedule();
    streamer_->forget_resident();
    next_load_ = 0;
    ++forwards_;
  }
  for (; next_load_ <= std::min(i + prefetch_, layers - 1); ++next_load_) streamer_->load(next_load_);
  auto block = std::dynamic_pointer_cast<DecoderBlockImpl>(streamer_->wait_for_module(i, "run"));
  TORCH_CHECK(block, "offload: the slots hold no decoder blocks");
  return *block;
}

void decoder_offload::begin_timed_pass() {
  at_begin_ = streamer_->settle();
  forwards_at_begin_ = forwards_;
}

void decoder_offload::end_timed_pass() {
  const layer_streamer::copy_times now = streamer_->settle();
  timed_h2d_ms_ += now.h2d_ms - at_begin_.h2d_ms;
  timed_exposed_ms_ += now.exposed_ms - at_begin_.exposed_ms;
  timed_forwards_ += forwards_ - forwards_at_begin_;
  ++timed_passes_;
}

void decoder_offload::annotate(offload_info& o) {
  o.used = true;
  o.target = "cpu";
  o.pinned = false;
  o.host_dtype = dtype_name(model_->dtype());
  o.layers = streamer_->layers();
  o.prefetch = prefetch_;
  o.resident_bound = streamer_->resident_bound();
  o.max_resident_layers = streamer_->max_resident_layers();
  o.full_weight_bytes = full_bytes_;
  o.resident_weight_bytes = resident_bytes_ + streamer_->resident_bound() * streamer_->slot_bytes();
  o.d2h_bytes_per_pass = 0;
  if (timed_passes_ == 0) return;
  const double passes = static_cast<double>(timed_passes_);
  o.bytes_per_pass = static_cast<int64_t>(static_cast<double>(streamer_->layers() * streamer_->layer_bytes()) *
                                          static_cast<double>(timed_forwards_) / passes);
  o.copy_ms_per_pass = timed_h2d_ms_ / passes;
  o.exposed_ms_per_pass = timed_exposed_ms_ / passes;
  if (timed_h2d_ms_ > 0) {
    o.hidden_share = 1.0 - std::min(1.0, timed_exposed_ms_ / timed_h2d_ms_);
    o.h2d_gb_per_s = static_cast<double>(o.bytes_per_pass) / (o.copy_ms_per_pass * 1e6);
  }
}

}  // namespace attnbench
