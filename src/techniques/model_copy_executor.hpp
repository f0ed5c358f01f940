// The executor of a technique that runs its own copy of the run's model, changed once before any
// pass (cast to 16 bits: cast_precision.cpp; linears pre-packed: packed_linear.cpp): the run's
// model is shared by every variant and must stay as it is. The copy then runs as the plain
// executor runs the model, under the plan's autocast: on for an "amp" variant, off for fp32 and for
// a cast or quantized copy (whose precision is the technique's, not autocast's).
#pragma once

#include <functional>
#include <optional>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/encoder.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {

class model_copy_executor : public executor_base {
 public:
  // Copies `model` onto `device` and applies `prepare` to the copy, timing both (prepare_ms()).
  model_copy_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v,
                      const variant_plan& p, bool causal,
                      const std::function<void(EncoderClassifier&)>& prepare);

 protected:
  torch::Tensor do_forward(const batch& b) override;
  const EncoderClassifier& copy() const { return copy_; }
  // The one-off copy and preparation, before any pass (not in the timed passes).
  double prepare_ms() const { return prepare_ms_; }

 private:
  attention_settings how_;
  torch::Device device_;
  std::optional<c10::ScalarType> autocast_;
  EncoderClassifier copy_{nullptr};
  double prepare_ms_ = 0;
};

}  // namespace attnbench
