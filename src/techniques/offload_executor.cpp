#include "techniques/offload_executor.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runner/device.hpp"
#include "techniques/precision.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;

#ifdef ATTNBENCH_WITH_CUDA
// Loads whose timing events may still be in flight. A record is read (and its events reused) only
// once its events completed; a ring this deep lets the host run far ahead of the GPU before it
// ever waits on one.
constexpr size_t timing_ring = 1024;
#endif

int64_t bytes_of(const std::vector<torch::Tensor>& ts) {
  int64_t n = 0;
  for (const auto& t : ts) n += static_cast<int64_t>(t.nbytes());
  return n;
}

// The host copy of one parameter: a detached CPU clone, matrices in the autocast dtype when asked.
torch::Tensor host_copy(const torch::Tensor& p, const offload_config& cfg, c10::ScalarType compute,
                        bool pin) {
  auto t = p.detach().to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true).contiguous();
  if (cfg.host_in_compute_dtype && p.dim() >= 2 && compute != torch::kFloat) t = t.to(compute);
  return pin ? t.pin_memory() : t;
}

std::string host_dtype_name(const offload_config& cfg, precision_kind p) {
  if (!cfg.host_in_compute_dtype || p == precision_kind::fp32) return "fp32";
  return p == precision_kind::amp_bf16 ? "bf16 matrices" : "fp16 matrices";
}

}  // namespace

struct offload_executor::slot {
  EncoderLayer module{nullptr};
  std::vector<torch::Tensor> params;  // the module's parameters, on the device, in registration order
  int64_t layer = -1;                 // whose weights it holds (or is receiving)
#ifdef ATTNBENCH_WITH_CUDA
  at::cuda::CUDAEvent ready;  // on the copy stream: the weights have arrived
  at::cuda::CUDAEvent done;   // on the compute stream: the layer that used them has run
  bool done_recorded = false;
#endif
};

#ifdef ATTNBENCH_WITH_CUDA
struct offload_executor::cuda_state {
  struct timing {
    at::cuda::CUDAEvent copy_start{cudaEventDefault};
    at::cuda::CUDAEvent copy_end{cudaEventDefault};
    at::cuda::CUDAEvent compute_ready{cudaEventDefault};  // compute reached the layer (before waiting)
    bool pending = false;
  };
  c10::cuda::CUDAStream copy_stream;
  std::vector<timing> ring;
  size_t next = 0;
  std::vector<size_t> by_slot;  // the ring record of each slot's current load
  double copy_ms = 0, exposed_ms = 0;

  explicit cuda_state(torch::Device device)
      : copy_stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())),
        ring(timing_ring) {}

  void settle(timing& t) {
    if (!t.pending) return;
    t.compute_ready.synchronize();
    t.copy_end.synchronize();
    copy_ms += t.copy_start.elapsed_time(t.copy_end);
    // Compute waited only if the copy ended after compute got there.
    exposed_ms += std::max(0.0f, t.compute_ready.elapsed_time(t.copy_end));
    t.pending = false;
  }
};
#else
struct offload_executor::cuda_state {};
#endif

std::optional<std::string> offload_skip_reason(const offload_config& offload, torch::Device device) {
  if (offload.target == "cpu" || device.is_cuda()) return std::nullopt;
  return fmt::format(
      "needs an accelerator: offloading streams weights from host memory to a GPU, and this run's device is "
      "{} "
      "(set offload.target to \"cpu\" to exercise the mechanism on the CPU)",
      device.str());
}

offload_executor::offload_executor(EncoderClassifier model, torch::Device device,
                                   const variant_config& variant, bool causal)
    : model_(std::move(model)),
      device_(device),
      precision_(variant.precision),
      how_{variant.attention, variant.backend, causal},
      cfg_(*variant.offload) {
  TORCH_CHECK(!offload_skip_reason(cfg_, device_), "offload: ", *offload_skip_reason(cfg_, device_));
  torch::NoGradGuard no_grad;
  const int64_t layers = model_->num_layers();
  TORCH_CHECK(layers > 0, "offload: the model has no encoder layers");
  const bool pin = cfg_.pinned && device_.is_cuda();
  const auto compute = compute_dtype(precision_);
  for (int64_t i = 0; i < layers; ++i) {
    std::vector<torch::Tensor> params;
    for (const auto& p : model_->layer(i)->parameters()) params.push_back(host_copy(p, cfg_, compute, pin));
    host_.push_back(std::move(params));
  }
  layer_bytes_ = bytes_of(host_.front());
  for (const auto& p : model_->parameters()) full_bytes_ += static_cast<int64_t>(p.nbytes());
  int64_t layer_param_bytes = 0;
  for (int64_t i = 0; i < layers; ++i) layer_param_bytes += bytes_of(model_->layer(i)->parameters());
  resident_bytes_ = full_bytes_ - layer_param_bytes;

  // prefetch + 1 slots (no more than there are layers): the residency bound is the slot count.
  const int64_t n_slots = std::min<int64_t>(cfg_.prefetch + 1, layers);
  slots_.resize(static_cast<size_t>(n_slots));
  for (auto& s : slots_) {
    s.module = EncoderLayer(model_->config());
    s.module->eval();
    s.module->to(device_);
    s.params = s.module->parameters();
    for (size_t k = 0; k < s.params.size(); ++k)
      if (host_.front()[k].scalar_type() != s.params[k].scalar_type())
        s.params[k].set_data(s.params[k].to(host_.front()[k].scalar_type()));
    s.params = s.module->parameters();
  }
#ifdef ATTNBENCH_WITH_CUDA
  if (device_.is_cuda()) {
    cuda_ = std::make_unique<cuda_state>(device_);
    cuda_->by_slot.assign(slots_.size(), 0);
    // Events are created on first record: create them all now, outside any timed pass.
    const auto stream = c10::cuda::getCurrentCUDAStream(device_.index());
    for (auto& t : cuda_->ring) {
      t.copy_start.record(stream);
      t.copy_end.record(stream);
      t.compute_ready.record(stream);
    }
    for (auto& s : slots_) {
      s.ready.record(stream);
      s.done.record(stream);
    }
    synchronize(device_);
  }
#endif
}

offload_executor::~offload_executor() = default;

int64_t offload_executor::resident_bound() const { return static_cast<int64_t>(slots_.size()); }

offload_executor::slot& offload_executor::slot_of(int64_t layer) {
  return slots_[static_cast<size_t>(layer) % slots_.size()];
}

void offload_executor::load(int64_t layer) {
  slot& s = slot_of(layer);
  resident_.insert(layer);
  TORCH_CHECK(static_cast<size_t>(resident_.size()) <= slots_.size(), "offload: ", resident_.size(),
              " layers resident, above the bound of ", slots_.size());
  max_resident_ = std::max<int64_t>(max_resident_, static_cast<int64_t>(resident_.size()));
  s.layer = layer;
  schedule_.push_back(fmt::format("load {}", layer));
  const auto& src = host_[static_cast<size_t>(layer)];
  try {
#ifdef ATTNBENCH_WITH_CUDA
    if (cuda_) {
      const size_t slot_index = static_cast<size_t>(layer) % slots_.size();
      auto& t = cuda_->ring[cuda_->next];
      cuda_->settle(t);  // its events are about to be reused
      cuda_->by_slot[slot_index] = cuda_->next;
      cuda_->next = (cuda_->next + 1) % cuda_->ring.size();
      const c10::cuda::CUDAStreamGuard on_copy(cuda_->copy_stream);
      // The slot is refilled only after the layer it held has run.
      if (s.done_recorded) s.done.block(cuda_->copy_stream);
      t.copy_start.record(cuda_->copy_stream);
      for (size_t k = 0; k < src.size(); ++k) s.params[k].copy_(src[k], /*non_blocking=*/true);
      t.copy_end.record(cuda_->copy_stream);
      s.ready.record(cuda_->copy_stream);
      t.pending = true;
      return;
    }
#endif
    const auto t0 = clock_type::now();
    for (size_t k = 0; k < src.size(); ++k) s.params[k].copy_(src[k]);
    // Synchronous on the compute thread: all of it is exposed.
    const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    copy_ms_ += ms;
    exposed_ms_ += ms;
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, "offload: copying layer ", layer, "'s weights (", layer_bytes_, " bytes) to ",
                device_.str(), " failed: ", e.what_without_backtrace());
  }
}

void offload_executor::wait_for(int64_t layer) {
#ifdef ATTNBENCH_WITH_CUDA
  if (cuda_) {
    slot& s = slot_of(layer);
    const auto compute = c10::cuda::getCurrentCUDAStream(device_.index());
    cuda_->ring[cuda_->by_slot[static_cast<size_t>(layer) % slots_.size()]].compute_ready.record(compute);
    s.ready.block(compute);
  }
#endif
  schedule_.push_back(fmt::format("run {}", layer));
}

void offload_executor::release(int64_t layer) {
#ifdef ATTNBENCH_WITH_CUDA
  if (cuda_) {
    slot& s = slot_of(layer);
    s.done.record(c10::cuda::getCurrentCUDAStream(device_.index()));
    s.done_recorded = true;
  }
#endif
  resident_.erase(layer);
}

torch::Tensor offload_executor::do_forward(const batch& b) {
  const autocast_scope amp(precision_, device_.type());
  const bool padded = b.real_tokens < b.input_ids.numel();
  const attention_mask mask =
      make_attention_mask(padded ? b.padding_mask : torch::Tensor(), how_.causal, how_.kind);
  schedule_.clear();
  ++forwards_;
  const auto layers = static_cast<int64_t>(host_.size());
  auto x = model_->embed(b.input_ids);  // (B, S, H)
  int64_t next_load = 0;
  for (int64_t i = 0; i < layers; ++i) {
    // Issue the copies up to layer i + prefetch before layer i computes: they overlap it.
    for (; next_load <= std::min(i + cfg_.prefetch, layers - 1); ++next_load) load(next_load);
    wait_for(i);
    RECORD_USER_SCOPE("encoder.layer");
    x = slot_of(i).module->forward(x, mask, how_);  // (B, S, H)
    release(i);
  }
  return model_->head(x, padded ? b.padding_mask : torch::Tensor());  // (B, num_labels) or (B, hidden)
}

void offload_executor::do_annotate(variant_result& r) {
  offload_info& o = r.offload;
  o.used = true;
  o.target = device_.str();
  o.host_dtype = host_dtype_name(cfg_, precision_);
  o.pinned = cfg_.pinned && device_.is_cuda();
  o.layers = static_cast<int64_t>(host_.size());
  o.prefetch = cfg_.prefetch;
  o.resident_bound = resident_bound();
  o.max_resident_layers = max_resident_;
  o.full_weight_bytes = full_bytes_;
  o.resident_weight_bytes = resident_bytes_ + resident_bound() * bytes_of(slots_.front().params);
  o.bytes_per_pass = o.layers * layer_bytes_ * r.batches;
  double copy_ms = copy_ms_, exposed_ms = exposed_ms_;
#ifdef ATTNBENCH_WITH_CUDA
  if (cuda_) {
    synchronize(device_);
    for (auto& t : cuda_->ring) cuda_->settle(t);
    copy_ms = cuda_->copy_ms;
    exposed_ms = cuda_->exposed_ms;
  }
#endif
  if (forwards_ == 0) return;
  const double per_pass = static_cast<double>(r.batches) / static_cast<double>(forwards_);
  o.copy_ms_per_pass = copy_ms * per_pass;
  o.exposed_ms_per_pass = exposed_ms * per_pass;
  if (copy_ms > 0) {
    o.hidden_share = 1.0 - std::min(1.0, exposed_ms / copy_ms);
    o.h2d_gb_per_s = static_cast<double>(o.bytes_per_pass) / (o.copy_ms_per_pass * 1e6);
  }
}

}  // namespace attnbench
