#include "techniques/plain_executor.hpp"

#include "techniques/precision.hpp"

namespace attnbench {

plain_executor::plain_executor(EncoderClassifier model, torch::Device device, const variant_config& variant,
                               bool causal)
    : model_(std::move(model)),
      device_(device),
      precision_(variant.precision),
      how_{variant.attention, variant.backend, causal, variant.kernel} {}

torch::Tensor plain_executor::do_forward(const batch& b) {
  // Variants share the one model, so its attention settings are set per call, not per model.
  model_->set_attention(how_);
  const autocast_scope amp(precision_, device_.type());
  // A batch without padding passes no mask, so SDPA may pick its mask-free kernels (flash).
  const bool padded = b.real_tokens < b.input_ids.numel();
  return model_->forward(b.input_ids, padded ? b.padding_mask : torch::Tensor());
}

}  // namespace attnbench
