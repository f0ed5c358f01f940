#include "workload/static_batching.hpp"

#include <fmt/format.h>

#include "workload/dynamic_batching.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace attnbench {

std::vector<int64_t> sample_lengths(const dataset& data) {
  std::vector<int64_t> out;
  out.reserve(data.samples.size());
  for (const auto& s : data.samples) out.push_back(static_cast<int64_t>(s.size()));
  return out;
}

std::string static_batching::describe() const {
  return fmt::format("static bs={} pad={}", batch_size_, to_string(padding_));
}

std::vector<batch_plan> static_batching::do_plan(const dataset& data, const std::vector<int64_t>& rows) const {
  return plan_static(rows, sample_lengths(data), batch_size_, padding_, max_length_);
}

std::string dynamic_batching::describe() const {
  std::string grouping = cfg_.grouping == grouping_kind::sorted
                             ? std::string("sorted")
                             : fmt::format("bucketed[{}]", fmt::join(cfg_.boundaries, ","));
  return fmt::format("dynamic {} max_tokens={} max_bs={} planner={}", grouping, cfg_.max_tokens,
                     cfg_.max_batch_size, to_string(cfg_.planner));
}

std::vector<batch_plan> dynamic_batching::do_plan(const dataset& data, const std::vector<int64_t>& rows) const {
  if (cfg_.planner == planner_kind::cost) return plan_min_cost(rows, sample_lengths(data), cfg_, cost_);
  return plan_dynamic(rows, sample_lengths(data), cfg_);
}

std::unique_ptr<batching_base> make_batching(const batching_config& cfg, int64_t max_length,
                                             const batch_cost_model& cost) {
  if (cfg.kind == "dynamic") return std::make_unique<dynamic_batching>(cfg, cost);
  return std::make_unique<static_batching>(cfg.batch_size, cfg.padding, max_length);
}

// One pooled set of buffers for a (B, S) shape. On CUDA the host side is pinned and the copy
// asynchronous; `copied` marks when the device has read the host buffer, so it is not refilled
// while a copy may still be reading it.
struct input_assembler::pooled {
  torch::Tensor host_ids, host_mask, dev_ids, dev_mask;
#ifdef ATTNBENCH_WITH_CUDA
  std::optional<at::cuda::CUDAEvent> copied;
#endif
};

input_assembler::input_assembler(const dataset& data, torch::Device device, bool pool)
    : data_(data), device_(device), pool_(pool) {}

input_assembler::~input_assembler() = default;

batch input_assembler::assemble(const batch_plan& plan) {
  const auto b = static_cast<int64_t>(plan.rows.size());
  const int64_t s = plan.padded_length;
  const bool to_device = !device_.is_cpu();
  pooled fresh;
  pooled* buf = &fresh;
  if (pool_) {
    auto& slot = buffers_[{b, s}];
    if (!slot) slot = std::make_unique<pooled>();
    buf = slot.get();
  }
  if (!buf->host_ids.defined()) {
    const auto host = torch::TensorOptions().pinned_memory(to_device && device_.is_cuda());
    buf->host_ids = torch::empty({b, s}, host.dtype(torch::kLong));   // (B, S)
    buf->host_mask = torch::empty({b, s}, host.dtype(torch::kBool));  // (B, S)
    allocations_ += 2;
  }
#ifdef ATTNBENCH_WITH_CUDA
  if (buf->copied) buf->copied->synchronize();
#endif
  const int64_t pad = special_tokens_for(INT64_MAX).pad;
  buf->host_ids.fill_(pad);
  buf->host_mask.fill_(false);
  auto ids_a = buf->host_ids.accessor<int64_t, 2>();
  auto mask_a = buf->host_mask.accessor<bool, 2>();
  int64_t real = 0;
  for (int64_t r = 0; r < b; ++r) {
    const auto& sample = data_.samples[static_cast<std::size_t>(plan.rows[static_cast<std::size_t>(r)])];
    for (std::size_t t = 0; t < sample.size(); ++t) {
      ids_a[r][static_cast<int64_t>(t)] = sample[t];
      mask_a[r][static_cast<int64_t>(t)] = true;
    }
    real += static_cast<int64_t>(sample.size());
  }
  torch::Tensor ids = buf->host_ids, mask = buf->host_mask;
  if (to_device) {
    if (!buf->dev_ids.defined()) {
      buf->dev_ids = torch::empty({b, s}, torch::TensorOptions().device(device_).dtype(torch::kLong));
      buf->dev_mask = torch::empty({b, s}, torch::TensorOptions().device(device_).dtype(torch::kBool));
      allocations_ += 2;
    }
    // Asynchronous from pinned memory in both modes, so pooled and fresh buffers differ only in
    // allocation (a fresh pinned block is not reused before the copy that reads it completes).
    const bool async = device_.is_cuda();
    buf->dev_ids.copy_(buf->host_ids, async);
    buf->dev_mask.copy_(buf->host_mask, async);
#ifdef ATTNBENCH_WITH_CUDA
    if (pool_ && device_.is_cuda()) {
      if (!buf->copied) buf->copied.emplace();
      buf->copied->record(c10::cuda::getCurrentCUDAStream(device_.index()));
    }
#endif
    ids = buf->dev_ids;
    mask = buf->dev_mask;
  }
  return batch{ids, mask, plan.rows, real, s};
}

}  // namespace attnbench
