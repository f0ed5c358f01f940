// The baseline execution path: the run's one model on its device, autocast as the variant says
// (techniques/precision.hpp). The runner uses it for every variant no other technique claims, and
// data-parallel workers run their shards with it.
//
// Under autocast ("precision": "amp", "amp-bf16", "amp-fp16") it runs a copy of the model whose
// linear weights and biases were cast to the autocast dtype once, when the executor was made
// (model/encoder.hpp: cast_linear_layers), and not by autocast on every call: in inference the
// weights never change, so each call's cast of every weight is pure overhead (it made the AMP row
// 1.67× slower than a bf16 cast on a Sapphire Rapids, issue 29). The numerics are autocast's
// (matrix products in the low dtype; embeddings, LayerNorm, the residual stream and everything
// autocast keeps in fp32 stay fp32), and the outputs equal plain autocast's
// (tests/techniques/test_amp_weights.cpp). fp32 variants run the shared model itself.
#pragma once

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/encoder.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {

class plain_executor : public executor_base {
 public:
  plain_executor(EncoderClassifier model, torch::Device device, const variant_config& variant,
                 const variant_plan& plan, bool causal);

 protected:
  torch::Tensor do_forward(const batch& b) override;
  void do_annotate(variant_result& r) override;

 private:
  EncoderClassifier model_;
  torch::Device device_;
  resolved_precision precision_;
  attention_settings how_;
  int64_t cast_bytes_ = 0;  // the linears' bytes in the autocast dtype (autocast variants only)
  double cast_ms_ = 0;      // the one-off copy and cast, before any pass
};

}  // namespace attnbench
