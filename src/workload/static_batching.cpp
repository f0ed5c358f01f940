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

namespace {

// Pooled buffer sets per (B, S) shape, used in turn. On CUDA the host side is pinned and the
// copy asynchronous, so a set's host buffers may be refilled only once the device has read
// them: with two sets the host fills one while the device may still be copying from the other,
// and waits only for the copy of the batch before last, so it runs up to two batches ahead of the
// device instead of one. On the CPU the copies are synchronous and the second set costs only its
// memory; the logic is kept the same so that it is tested here.
constexpr std::size_t pool_depth = 2;

}  // namespace

// One set of buffers. `copied` (CUDA, pooled) marks when the device has read the host buffers.
struct buffer_set {
  torch::Tensor host_ids, host_mask, dev_ids, dev_mask;
#ifdef ATTNBENCH_WITH_CUDA
  std::optional<at::cuda::CUDAEvent> copied;
#endif
};

struct input_assembler::pooled {
  std::vector<buffer_set> ring;  // pool_depth sets, allocated together when the shape is first seen
  std::size_t next = 0;          // the set the next batch of this shape fills
};

input_assembler::input_assembler(const dataset& data, torch::Device device, bool pool)
    : data_(data), device_(device), pool_(pool) {}

input_assembler::~input_assembler() = default;

batch input_assembler::assemble(const batch_plan& plan) {
  const auto b = static_cast<int64_t>(plan.rows.size());
  const int64_t s = plan.padded_length;
  const bool to_device = !device_.is_cpu();
  const auto allocate = [&](buffer_set& set) {
    const auto host = torch::TensorOptions().pinned_memory(to_device && device_.is_cuda());
    set.host_ids = torch::empty({b, s}, host.dtype(torch::kLong));   // (B, S)
    set.host_mask = torch::empty({b, s}, host.dtype(torch::kBool));  // (B, S)
    allocations_ += 2;
    if (to_device) {
      set.dev_ids = torch::empty({b, s}, torch::TensorOptions().device(device_).dtype(torch::kLong));
      set.dev_mask = torch::empty({b, s}, torch::TensorOptions().device(device_).dtype(torch::kBool));
      allocations_ += 2;
    }
#ifdef ATTNBENCH_WITH_CUDA
    if (pool_ && device_.is_cuda()) {
      // Created (by a first record) with the buffers, not inside whichever pass first refills them.
      set.copied.emplace();
      set.copied->record(c10::cuda::getCurrentCUDAStream(device_.index()));
    }
#endif
  };
  buffer_set fresh;
  buffer_set* buf = &fresh;
  if (pool_) {
    auto& slot = buffers_[{b, s}];
    if (!slot) {
      slot = std::make_unique<pooled>();
      slot->ring.resize(pool_depth);
      for (auto& set : slot->ring) allocate(set);
    }
    buf = &slot->ring[slot->next];
    slot->next = (slot->next + 1) % slot->ring.size();
  } else {
    allocate(fresh);
  }
#ifdef ATTNBENCH_WITH_CUDA
  if (buf->copied) buf->copied->synchronize();  // the copy that last read this set has finished
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
    // Asynchronous from pinned memory in both modes, so pooled and fresh buffers differ only in
    // allocation (a fresh pinned block is not reused before the copy that reads it completes:
    // LibTorch's pinned-memory allocator records the copy's stream).
    const bool async = device_.is_cuda();
    buf->dev_ids.copy_(buf->host_ids, async);
    buf->dev_mask.copy_(buf->host_mask, async);
#ifdef ATTNBENCH_WITH_CUDA
    if (buf->copied) buf->copied->record(c10::cuda::getCurrentCUDAStream(device_.index()));
#endif
    ids = buf->dev_ids;
    mask = buf->dev_mask;
  }
  return batch{ids, mask, plan.rows, real, s};
}

}  // namespace attnbench
