// CPU offloading in inference, the article's section 2.4: the encoder layers' weights live in host
// memory (page-locked on CUDA) and are streamed to the device a layer at a time by a
// layer_streamer (the slots, the copy stream and the residency bound are described there). The
// copy of layer i + prefetch is issued before layer i computes, so on a GPU it overlaps that
// compute. Embeddings, pooler and classifier stay resident.
//
// Without an accelerator there is nothing to offload to: the variant is SKIPPED ("needs an
// accelerator") unless offload.target is "cpu", which runs the same mechanism on the CPU with
// separate slot buffers and synchronous copies (every copy exposed, nothing hidden): it tests
// the schedule and the residency bound, it is not a speedup. Training: offload_trainer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/attention.hpp"
#include "model/encoder.hpp"
#include "core/executor.hpp"
#include "techniques/layer_streamer.hpp"

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
  const std::vector<std::string>& last_schedule() const { return streamer_->schedule(); }
  int64_t max_resident_layers() const { return streamer_->max_resident_layers(); }
  int64_t resident_bound() const { return streamer_->resident_bound(); }  // prefetch + 1, at most the layers
  int64_t layer_bytes() const { return streamer_->layer_bytes(); }

 protected:
  torch::Tensor do_forward(const batch& b) override;
  void do_annotate(variant_result& r) override;

 private:
  EncoderClassifier model_;
  torch::Device device_;
  precision_kind precision_;
  attention_settings how_;
  offload_config cfg_;
  std::unique_ptr<layer_streamer> streamer_;
  int64_t resident_bytes_ = 0;  // parameters that stay on the device (embeddings, head)
  int64_t full_bytes_ = 0;      // every parameter of the model
  int64_t forwards_ = 0;
};

}  // namespace attnbench
