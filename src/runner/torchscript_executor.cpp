#include "runner/torchscript_executor.hpp"

#include "techniques/precision.hpp"

namespace attnbench {

torchscript_executor::torchscript_executor(std::shared_ptr<torchscript_model> model, torch::Device device,
                                           const variant_plan& plan)
    : model_(std::move(model)), device_(device), autocast_(plan.precision.autocast) {}

torch::Tensor torchscript_executor::do_forward(const batch& b) {
  const autocast_scope amp(autocast_, device_.type());
  const bool padded = b.real_tokens < b.input_ids.numel();
  return model_->forward(b.input_ids, padded ? b.padding_mask : torch::Tensor());
}

}  // namespace attnbench
