// The plain executor runs the shared model on the run's device under the variant's precision and
// attention settings; offload, parallel, pipeline and registered techniques (techniques/registry.hpp)
// plug in behind the same interface (core/executor.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/encoder.hpp"
#include "report/result.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {

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

// Why this variant cannot run here (e.g. offloading without an accelerator), or nullopt. The
// variant is then SKIPPED with the reason in every report: no numbers, not a failure.
std::optional<std::string> executor_skip_reason(const variant_config& variant, torch::Device device);

std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, bool causal);

}  // namespace attnbench
