// CPU offloading in inference, the article's section 2.4: the encoder layers' weights live in host
// memory (page-locked on CUDA) and are streamed to the device a layer at a time by a
// layer_streamer (the slots, the copy stream and the residency bound are described there). The
// copy of layer i + prefetch is issued before layer i computes, so on a GPU it overlaps that
// compute.
//
// What the executor holds on the device is its own: a copy of the embeddings, pooler and
// classifier (the model without its encoder layers) and the prefetch + 1 slots, nothing else.
// It keeps no reference to the model it was given. The host weights are the given model's own
// encoder-layer parameters when that model lives on the host (the run's host model,
// runner/model_placement.hpp): no second host copy, and on CUDA they are made page-locked in
// place. A model on the device, or host copies in the compute dtype, are copied to host memory.
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
#include "core/executor.hpp"
#include "model/attention.hpp"
#include "model/encoder.hpp"
#include "techniques/layer_streamer.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {

// Why an offload variant cannot run on `device`, or nullopt.
std::optional<std::string> offload_skip_reason(const offload_config& offload, torch::Device device);

class offload_executor : public executor_base {
 public:
  offload_executor(EncoderClassifier model, torch::Device device, const variant_config& variant,
                   const variant_plan& plan, bool causal);
  ~offload_executor() override;
  offload_executor(const offload_executor&) = delete;
  offload_executor& operator=(const offload_executor&) = delete;

  // The last forward's schedule, for tests: "load 0", "load 1", "run 0", "load 2", "run 1", …
  const std::vector<std::string>& last_schedule() const { return streamer_->schedule(); }
  int64_t max_resident_layers() const { return streamer_->max_resident_layers(); }
  int64_t resident_bound() const { return streamer_->resident_bound(); }  // prefetch + 1, at most the layers
  int64_t layer_bytes() const { return streamer_->layer_bytes(); }
  // Every parameter the executor holds on its device (the resident part, then the slots), and the
  // resident part alone (embeddings, pooler, classifier: a model without encoder layers).
  std::vector<torch::Tensor> device_parameters() const;
  const EncoderClassifier& resident() const { return resident_; }
  // The host weights, per layer, and whether they are the given model's own parameters.
  const std::vector<std::vector<torch::Tensor>>& host_weights() const { return streamer_->host_weights(); }
  bool shares_host_weights() const { return shares_host_weights_; }

 protected:
  torch::Tensor do_forward(const batch& b) override;
  void do_annotate(variant_result& r) override;

 private:
  EncoderClassifier resident_{nullptr};  // on the device: the model without its encoder layers
  torch::Device device_;
  resolved_precision precision_;
  attention_settings how_;
  offload_config cfg_;
  std::unique_ptr<layer_streamer> streamer_;
  int64_t resident_bytes_ = 0;  // parameters that stay on the device (embeddings, head)
  int64_t full_bytes_ = 0;      // every parameter of the model
  bool shares_host_weights_ = false;
  int64_t forwards_ = 0;
};

}  // namespace attnbench
