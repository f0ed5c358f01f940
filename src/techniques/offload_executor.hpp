// CPU offloading, the article's section 2.4: the encoder layers' weights live in host memory
// (page-locked on CUDA) and are streamed to the device a layer at a time. Before layer i runs, its
// weights are in one of prefetch + 1 device slots; the copy of layer i + prefetch is issued before
// layer i computes, on a separate copy stream, so on a GPU it overlaps that compute (events order
// the two streams: a slot is refilled only after the layer that used it has run). At most
// prefetch + 1 offloaded layers are on the device at once: asserted on every load, and reported.
// Embeddings, pooler and classifier stay resident.
//
// Without an accelerator there is nothing to offload to: the variant is SKIPPED ("needs an
// accelerator") unless offload.target is "cpu", which runs the same mechanism on the CPU with
// separate slot buffers and synchronous copies (every copy exposed, nothing hidden): it tests
// the schedule and the residency bound, it is not a speedup.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/attention.hpp"
#include "model/encoder.hpp"
#include "runner/executor_base.hpp"

namespace attnbench {

// Why an offload variant cannot run on `device`, or nullopt.
std::optional<std::string> offload_skip_reason(const offload_config& offload, torch::Device device);

class offload_executor : public executor_base {
 public:
  offload_executor(EncoderClassifier model, torch::Device device, const variant_config& variant, bool causal);
  ~offload_executor() override;
  offload_executor(const offload_executor&) = delete;
  offload_executor& operator=(const offload_executor&) = delete;

  // The last forward's schedule, for tests: "load 0", "load 1", "run 0", "load 2", "run 1", …
  const std::vector<std::string>& last_schedule() const { return schedule_; }
  int64_t max_resident_layers() const { return max_resident_; }
  int64_t resident_bound() const;  // the slot count: prefetch + 1, at most the layer count
  int64_t layer_bytes() const { return layer_bytes_; }

 protected:
  torch::Tensor do_forward(const batch& b) override;
  void do_annotate(variant_result& r) override;

 private:
  struct slot;
  struct cuda_state;
  void load(int64_t layer);
  void wait_for(int64_t layer);
  void release(int64_t layer);
  slot& slot_of(int64_t layer);

  EncoderClassifier model_;
  torch::Device device_;
  precision_kind precision_;
  attention_settings how_;
  offload_config cfg_;
  std::vector<std::vector<torch::Tensor>> host_;  // per layer: its parameters in host memory
  std::vector<slot> slots_;
  int64_t layer_bytes_ = 0;
  int64_t resident_bytes_ = 0;  // parameters that stay on the device (embeddings, head)
  int64_t full_bytes_ = 0;      // every parameter of the model
  std::set<int64_t> resident_;  // offloaded layers whose weights are on the device now
  int64_t max_resident_ = 0;
  std::vector<std::string> schedule_;
  int64_t forwards_ = 0;
  double copy_ms_ = 0;  // CPU mechanism: host clock; CUDA: accumulated at annotate
  double exposed_ms_ = 0;
  std::unique_ptr<cuda_state> cuda_;
};

}  // namespace attnbench
