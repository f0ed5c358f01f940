// Runs a variant on a TorchScript model: the module on the run's device under the variant's
// autocast precision. Attention settings do not apply: the module's attention is its own.
#pragma once

#include <memory>

#include "model/torchscript_model.hpp"
#include "runner/executor_base.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {

class torchscript_executor : public executor_base {
 public:
  torchscript_executor(std::shared_ptr<torchscript_model> model, torch::Device device,
                       const variant_plan& plan);

 protected:
  torch::Tensor do_forward(const batch& b) override;

 private:
  std::shared_ptr<torchscript_model> model_;
  torch::Device device_;
  std::optional<c10::ScalarType> autocast_;
};

}  // namespace attnbench
