// The baseline execution path: the run's one model on its device, autocast as the variant says
// (techniques/precision.hpp). The runner uses it for every variant no other technique claims, and
// data-parallel workers run their shards with it.
#pragma once

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/encoder.hpp"

namespace attnbench {

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

}  // namespace attnbench
