#include "runner/executor_base.hpp"

#include "techniques/offload_executor.hpp"
#include "techniques/pipeline_executor.hpp"
#include "techniques/precision.hpp"

namespace attnbench {

plain_executor::plain_executor(EncoderClassifier model, torch::Device device, const variant_config& variant,
                               bool causal)
    : model_(std::move(model)),
      device_(device),
      precision_(variant.precision),
      how_{variant.attention, variant.backend, causal} {}

torch::Tensor plain_executor::do_forward(const batch& b) {
  // Variants share the one model, so its attention settings are set per call, not per model.
  model_->set_attention(how_);
  const autocast_scope amp(precision_, device_.type());
  // A batch without padding passes no mask, so SDPA may pick its mask-free kernels (flash).
  const bool padded = b.real_tokens < b.input_ids.numel();
  return model_->forward(b.input_ids, padded ? b.padding_mask : torch::Tensor());
}

std::optional<std::string> executor_skip_reason(const variant_config& variant, torch::Device device) {
  if (variant.offload) return offload_skip_reason(*variant.offload, device);
  if (variant.parallel && variant.parallel->mode == parallel_mode::threads && variant.parallel->devices.empty())
    return std::string("needs an accelerator: \"devices\": \"all\" means every CUDA device, and this machine "
                       "has none (list CPU workers, e.g. [\"cpu\", \"cpu\"], to run on the CPU)");
  return std::nullopt;
}

std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, bool causal) {
  // Technique executors are chosen here from the variant's technique blocks.
  if (variant.offload) return std::make_unique<offload_executor>(std::move(model), device, variant, causal);
  if (variant.pipeline) return std::make_unique<pipeline_executor>(std::move(model), device, variant, causal);
  return std::make_unique<plain_executor>(std::move(model), device, variant, causal);
}

}  // namespace attnbench
