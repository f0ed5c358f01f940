#include "techniques/layer_streamer.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/device.hpp"

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


double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

}  // namespace

struct layer_streamer::slot {
  std::shared_ptr<torch::nn::Module> module;
  std::vector<torch::Tensor> params;  // the module's parameters, on the device, in registration order
  int64_t layer = -1;                 // whose weights it holds (or is receiving)
#ifdef ATTNBENCH_WITH_CUDA
  at::cuda::CUDAEvent ready;  // on the copy stream: the weights have arrived
  at::cuda::CUDAEvent done;   // on the compute stream: the layer that used them has run
  bool done_recorded = false;
#endif
};

#ifdef ATTNBENCH_WITH_CUDA
struct layer_streamer::cuda_state {
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
  at::cuda::CUDAEvent d2h_start{cudaEventDefault}, d2h_end{cudaEventDefault};
  copy_times times;

  explicit cuda_state(torch::Device device)
      : copy_stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())),
        ring(timing_ring) {}

  void settle(timing& t) {
    if (!t.pending) return;
    t.compute_ready.synchronize();
    t.copy_end.synchronize();
    times.h2d_ms += t.copy_start.elapsed_time(t.copy_end);
    // Compute waited only if the copy ended after compute got there.
    times.exposed_ms += std::max(0.0f, t.compute_ready.elapsed_time(t.copy_end));
    t.pending = false;
  }
};
#else
struct layer_streamer::cuda_state {};
#endif

int64_t bytes_of(const std::vector<torch::Tensor>& ts) {
  int64_t n = 0;
  for (const auto& t : ts) n += static_cast<int64_t>(t.nbytes());
  return n;
}

layer_streamer::layer_streamer(const model_config& model, std::vector<std::vector<torch::Tensor>> host,
                               torch::Device device, int64_t prefetch, bool pinned)
    : layer_streamer([&model] { return std::static_pointer_cast<torch::nn::Module>(EncoderLayer(model).ptr()); },
                     std::move(host), device, prefetch, pinned) {}

layer_streamer::layer_streamer(const slot_factory& make_slot, std::vector<std::vector<torch::Tensor>> host,
                               torch::Device device, int64_t prefetch, bool pinned)
    : device_(device), pinned_(pinned), host_(std::move(host)) {
  TORCH_CHECK(!host_.empty(), "offload: the model has no encoder layers");
  TORCH_CHECK(prefetch >= 0, "offload: prefetch must be >= 0; got ", prefetch);
  torch::NoGradGuard no_grad;
  layer_bytes_ = bytes_of(host_.front());
  // prefetch + 1 slots (no more than there are layers): the residency bound is the slot count.
  const int64_t n_slots = std::min<int64_t>(prefetch + 1, layers());
  slots_.resize(static_cast<size_t>(n_slots));
  for (auto& s : slots_) {
    s.module = make_slot();
    s.module->eval();
    s.module->to(device_);
    s.params = s.module->parameters();
    TORCH_CHECK(s.params.size() == host_.front().size(), "offload: a layer has ", s.params.size(),
                " parameters, its host copy ", host_.front().size());
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
    cuda_->d2h_start.record(stream);
    cuda_->d2h_end.record(stream);
    // The slots were allocated on the compute stream and are written on the copy stream: tell the
    // caching allocator, so that freeing a slot (the streamer destroyed, say by a forward that
    // threw mid-copy) never hands its memory to another tensor while a copy still writes it.
    for (auto& s : slots_)
      for (auto& p : s.params) p.record_stream(cuda_->copy_stream.unwrap());
    synchronize(device_);
  }
#endif
}

layer_streamer::~layer_streamer() {
#ifdef ATTNBENCH_WITH_CUDA
  // Copies still in flight read the host weights and write the slots: let them land before
  // either can go (the host tensors are the caller's, freed right after in an unwinding forward).
  if (cuda_) {
    try {
      cuda_->copy_stream.synchronize();
    } catch (...) {
      // A destructor must not throw; a device error here is reported by the next CUDA call.
    }
  }
#endif
}

int64_t layer_streamer::resident_bound() const { return static_cast<int64_t>(slots_.size()); }

int64_t layer_streamer::slot_bytes() const { return bytes_of(slots_.front().params); }

std::vector<torch::Tensor> layer_streamer::slot_parameters() const {
  std::vector<torch::Tensor> out;
  for (const auto& s : slots_) out.insert(out.end(), s.params.begin(), s.params.end());
  return out;
}

layer_streamer::slot& layer_streamer::slot_of(int64_t layer) {
  return slots_[static_cast<size_t>(layer) % slots_.size()];
}

void layer_streamer::match_mode(EncoderLayerImpl& like) {
  const auto from = like.modules(/*include_self=*/true);
  for (auto& s : slots_) {
    const auto to = s.module->modules(/*include_self=*/true);
    TORCH_CHECK(from.size() == to.size(), "offload: a slot is not built like the model's layers");
    for (size_t k = 0; k < from.size(); ++k) {
      if (auto* d = from[k]->as<torch::nn::Dropout>())
        to[k]->as<torch::nn::Dropout>()->options.p(d->options.p());
      if (auto* a = from[k]->as<SelfAttention>()) to[k]->as<SelfAttention>()->set_dropout(a->dropout());
    }
    s.module->train(like.is_training());
  }
}

void layer_streamer::load(int64_t layer) {
  TORCH_CHECK(0 <= layer && layer < layers(), "offload: no layer ", layer);
  slot& s = slot_of(layer);
  resident_.insert(layer);
  TORCH_CHECK(static_cast<size_t>(resident_.size()) <= slots_.size(), "offload: ", resident_.size(),
              " layers resident, above the bound of ", slots_.size());
  max_resident_ = std::max<int64_t>(max_resident_, static_cast<int64_t>(resident_.size()));
  s.layer = layer;
  schedule_.push_back(fmt::format("load {}", layer));
  const auto& src = host_[static_cast<size_t>(layer)];
  // The slots are leaves that require grad (training differentiates through them): fill them
  // outside autograd.
  const torch::NoGradGuard no_grad;
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
    const double ms = ms_since(t0);
    cpu_times_.h2d_ms += ms;
    cpu_times_.exposed_ms += ms;
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, "offload: copying layer ", layer, "'s weights (", layer_bytes_, " bytes) to ",
                device_.str(), " failed: ", e.what_without_backtrace());
  }
}

EncoderLayer layer_streamer::wait_for(int64_t layer, const char* what) {
  auto layer_module = std::dynamic_pointer_cast<EncoderLayerImpl>(wait_for_module(layer, what));
  TORCH_CHECK(layer_module, "offload: the slots hold no encoder layers");
  return EncoderLayer(layer_module);
}

std::shared_ptr<torch::nn::Module> layer_streamer::wait_for_module(int64_t layer, const char* what) {
  slot& s = slot_of(layer);
  TORCH_CHECK(s.layer == layer && resident_.count(layer) == 1, "offload: layer ", layer,
              " runs before its weights were loaded");
#ifdef ATTNBENCH_WITH_CUDA
  if (cuda_) {
    const auto compute = c10::cuda::getCurrentCUDAStream(device_.index());
    cuda_->ring[cuda_->by_slot[static_cast<size_t>(layer) % slots_.size()]].compute_ready.record(compute);
    s.ready.block(compute);
  }
#endif
  schedule_.push_back(fmt::format("{} {}", what, layer));
  return s.module;
}

void layer_streamer::release(int64_t layer) {
#ifdef ATTNBENCH_WITH_CUDA
  if (cuda_) {
    slot& s = slot_of(layer);
    s.done.record(c10::cuda::getCurrentCUDAStream(device_.index()));
    s.done_recorded = true;
  }
#endif
  resident_.erase(layer);
}

std::vector<torch::Tensor> layer_streamer::to_host(const std::vector<torch::Tensor>& device_tensors) {
  std::vector<torch::Tensor> out(device_tensors.size());
  const auto host_like = [&](const torch::Tensor& t) {
    return torch::empty(t.sizes(), t.options().device(torch::kCPU).pinned_memory(pinned_));
  };
  try {
#ifdef ATTNBENCH_WITH_CUDA
    if (cuda_) {
      // On the compute stream, which produced the tensors: the copies follow them without an event.
      const auto compute = c10::cuda::getCurrentCUDAStream(device_.index());
      cuda_->d2h_start.record(compute);
      for (size_t k = 0; k < out.size(); ++k) {
        if (!device_tensors[k].defined()) continue;
        out[k] = host_like(device_tensors[k]);
        out[k].copy_(device_tensors[k], /*non_blocking=*/pinned_);
      }
      cuda_->d2h_end.record(compute);
      cuda_->d2h_end.synchronize();
      const double ms = cuda_->d2h_start.elapsed_time(cuda_->d2h_end);
      cuda_->times.d2h_ms += ms;
      cuda_->times.exposed_ms += ms;
      return out;
    }
#endif
    const auto t0 = clock_type::now();
    for (size_t k = 0; k < out.size(); ++k) {
      if (!device_tensors[k].defined()) continue;
      out[k] = host_like(device_tensors[k]);
      out[k].copy_(device_tensors[k]);
    }
    const double ms = ms_since(t0);
    cpu_times_.d2h_ms += ms;
    cpu_times_.exposed_ms += ms;
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, "offload: copying gradients from ", device_.str(),
                " to host memory failed: ", e.what_without_backtrace());
  }
  return out;
}

layer_streamer::copy_times layer_streamer::settle() {
#ifdef ATTNBENCH_WITH_CUDA
  if (cuda_) {
    synchronize(device_);
    for (auto& t : cuda_->ring) cuda_->settle(t);
    return cuda_->times;
  }
#endif
  return cpu_times_;
}

void layer_streamer::annotate(offload_info& o, int64_t batches, int64_t sweeps) {
  o.used = true;
  o.target = device_.str();
  o.pinned = pinned_;
  o.layers = layers();
  o.resident_bound = resident_bound();
  o.max_resident_layers = max_resident_;
  const copy_times t = settle();
  if (sweeps == 0) return;
  const double per_pass = static_cast<double>(batches) / static_cast<double>(sweeps);
  const double copy_ms = t.h2d_ms + t.d2h_ms;
  o.copy_ms_per_pass = copy_ms * per_pass;
  o.exposed_ms_per_pass = t.exposed_ms * per_pass;
  if (copy_ms > 0) o.hidden_share = 1.0 - std::min(1.0, t.exposed_ms / copy_ms);
  if (t.h2d_ms > 0)
    o.h2d_gb_per_s =
        static_cast<double>(o.bytes_per_pass - o.d2h_bytes_per_pass) / (t.h2d_ms * per_pass * 1e6);
}

}  // namespace attnbench
