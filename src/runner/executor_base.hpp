// How one variant turns a batch into logits. The plain executor runs the shared model on the
// run's device under the variant's precision and attention settings; offload, parallel and
// pipeline executors plug in behind the same interface (one file each in src/techniques/).
#pragma once

#include <memory>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/encoder.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {

class executor_base {
 public:
  virtual ~executor_base() = default;
  // Logits (B, C) float32 for one batch, in the batch's row order. Runs under inference mode.
  torch::Tensor forward(const batch& b) { return do_forward(b); }

 protected:
  virtual torch::Tensor do_forward(const batch& b) = 0;
};

// The baseline execution path: the one model, one device, autocast as the variant says.
class plain_executor : public executor_base {
 public:
  plain_executor(EncoderClassifier model, torch::Device device, const variant_config& variant, bool causal);

 protected:
  torch::Tensor do_forward(const batch& b) override;

 private:
  EncoderClassifier model_;
  torch::Device device_;
  precision_kind precision_;
  attention_settings how_;
};

std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, bool causal);

}  // namespace attnbench
