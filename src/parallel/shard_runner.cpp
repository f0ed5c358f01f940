#include "parallel/shard_runner.hpp"

#include <chrono>

#include "core/device.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

#ifdef ATTNBENCH_WITH_CUDA
// A worker's own stream, so that replicas on different GPUs (or sharing one) do not serialise on
// the default stream.
struct shard_runner::cuda_state {
  c10::cuda::CUDAStream stream;
};
#else
struct shard_runner::cuda_state {};
#endif

shard_runner::shard_runner(EncoderClassifier replica, torch::Device device, const variant_config& variant,
                           const variant_plan& plan, bool causal, const dataset& data,
                           std::vector<batch_plan> plans, bool assemble_inputs)
    : device_(device),
      plans_(std::move(plans)),
      executor_(std::move(replica), device, variant, plan, causal) {
#ifdef ATTNBENCH_WITH_CUDA
  if (device_.is_cuda())
    cuda_ = std::make_unique<cuda_state>(cuda_state{c10::cuda::getStreamFromPool(false, device_.index())});
#endif
  if (assemble_inputs) {
    assembler_ = std::make_unique<input_assembler>(data, device_, variant.batching.pool);
  } else {
    input_assembler once(data, device_, /*pool=*/false);
    for (const auto& p : plans_) prebuilt_.push_back(once.assemble(p));
    synchronize(device_);
  }
}

shard_runner::~shard_runner() = default;

whole_pass shard_runner::run(bool keep_outputs) {
  // Inference mode is per thread: a worker thread must enter it itself.
  const torch::InferenceMode inference;
  whole_pass out;
  out.batch_ms.reserve(plans_.size());
  const int64_t allocations_before = assembler_ ? assembler_->allocations() : 0;
  std::vector<torch::Tensor> logits;
  batch scratch;
  const auto batch_at = [&](std::size_t k) -> const batch& {
    if (!prebuilt_.empty()) return prebuilt_[k];
    scratch = assembler_->assemble(plans_[k]);
    return scratch;
  };
  const auto keep = [&](const batch& b, const torch::Tensor& y) {
    if (!keep_outputs) return;
    if (y.is_cuda()) {
      // Into page-locked memory without waiting: a blocking copy per batch would hold the host
      // until the device finished the batch, so it could never queue the next one ahead. The
      // pass synchronises the stream once at its end, before the outputs are read.
      auto host = torch::empty(y.sizes(), y.options().device(torch::kCPU).pinned_memory(true));
      host.copy_(y, /*non_blocking=*/true);
      logits.push_back(host);
    } else {
      logits.push_back(y.to(torch::kCPU));
    }
    out.sample_index.insert(out.sample_index.end(), b.sample_index.begin(), b.sample_index.end());
  };
#ifdef ATTNBENCH_WITH_CUDA
  if (cuda_) {
    const c10::cuda::CUDAGuard device_guard(device_.index());
    const c10::cuda::CUDAStreamGuard stream_guard(cuda_->stream);
    std::vector<at::cuda::CUDAEvent> marks(plans_.size() + 1);
    for (auto& m : marks) m = at::cuda::CUDAEvent(cudaEventDefault);
    for (auto& m : marks) m.record(cuda_->stream);
    cuda_->stream.synchronize();
    const auto t0 = clock_type::now();
    marks[0].record(cuda_->stream);
    for (std::size_t k = 0; k < plans_.size(); ++k) {
      const batch& b = batch_at(k);
      keep(b, executor_.forward(b));
      marks[k + 1].record(cuda_->stream);
    }
    cuda_->stream.synchronize();
    out.seconds = seconds_since(t0);
    for (std::size_t i = 1; i < marks.size(); ++i) out.batch_ms.push_back(marks[i - 1].elapsed_time(marks[i]));
  } else
#endif
  {
    const auto t0 = clock_type::now();
    for (std::size_t k = 0; k < plans_.size(); ++k) {
      const auto tb = clock_type::now();
      const batch& b = batch_at(k);
      keep(b, executor_.forward(b));
      out.batch_ms.push_back(seconds_since(tb) * 1e3);
    }
    out.seconds = seconds_since(t0);
  }
  if (assembler_) out.allocations = assembler_->allocations() - allocations_before;
  if (keep_outputs && !logits.empty()) out.outputs = torch::cat(logits);
  return out;
}

}  // namespace attnbench
