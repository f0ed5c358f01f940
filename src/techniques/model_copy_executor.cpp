#include "techniques/model_copy_executor.hpp"

#include <chrono>

#include "core/device.hpp"
#include "techniques/precision.hpp"

namespace attnbench {

model_copy_executor::model_copy_executor(const EncoderClassifier& model, torch::Device device,
                                         const variant_config& v, const variant_plan& p, bool causal,
                                         const std::function<void(EncoderClassifier&)>& prepare)
    : how_{v.attention, v.backend, causal, v.kernel}, device_(device), autocast_(p.precision.autocast) {
  const auto t0 = std::chrono::steady_clock::now();
  copy_ = replicate(model, device);
  prepare(copy_);
  synchronize(device);
  prepare_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

torch::Tensor model_copy_executor::do_forward(const batch& b) {
  copy_->set_attention(how_);
  // None for a cast or quantized copy (a no-op scope); autocast's dtype for a technique that runs
  // under AMP (pre-packed bf16 linears with "precision": "amp").
  const autocast_scope amp(autocast_, device_.type());
  // A batch without padding passes no mask, as the plain executor does (SDPA's mask-free kernels).
  const bool padded = b.real_tokens < b.input_ids.numel();
  return copy_->forward(b.input_ids, padded ? b.padding_mask : torch::Tensor());
}

}  // namespace attnbench
