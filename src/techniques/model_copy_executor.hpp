// The executor of a technique that runs its own copy of the run's model, changed once before any
// pass (cast to 16 bits: cast_precision.cpp; linears pre-packed: packed_linear.cpp): the run's
// model is shared by every variant and must stay as it is. The copy then runs as the plain
// executor runs the model, under the variant's core precision: autocast for an "amp" variant, none
// for fp32 (and for a cast copy, whose "precision" value is the technique's, not autocast's).
#pragma once

#include <functional>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/encoder.hpp"

namespace attnbench {

class model_copy_executor : public executor_base {
 public:
  // Copies `model` onto `device` and applies `prepare` to the copy, timing both (prepare_ms()).
  model_copy_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v, bool causal,
                      const std::function<void(EncoderClassifier&)>& prepare);

 protected:
  torch::Tensor do_forward(const batch& b) override;
  const EncoderClassifier& copy() const { return copy_; }
  // The one-off copy and preparation, before any pass (not in the timed passes).
  double prepare_ms() const { return prepare_ms_; }

 private:
  attention_settings how_;
  torch::Device device_;
  precision_kind precision_;
  EncoderClassifier copy_{nullptr};
  double prepare_ms_ = 0;
};

}  // namespace attnbench
