#include "techniques/plain_executor.hpp"

#include <chrono>

#include <fmt/format.h>

#include "core/device.hpp"
#include "model/linear_cast.hpp"
#include "techniques/precision.hpp"

namespace attnbench {

plain_executor::plain_executor(EncoderClassifier model, torch::Device device, const variant_config& variant,
                               const variant_plan& plan, bool causal)
    : model_(std::move(model)),
      device_(device),
      precision_(plan.precision),
      how_{variant.attention, variant.backend, causal, variant.kernel} {
  if (!precision_.autocast) return;
  // The run's model is shared by every variant: the cast goes into a copy of its own.
  const auto t0 = std::chrono::steady_clock::now();
  model_ = replicate(model_, device_);
  cast_bytes_ = cast_linear_layers(*model_, *precision_.autocast);
  synchronize(device_);
  cast_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

torch::Tensor plain_executor::do_forward(const batch& b) {
  // Variants share the one model, so its attention settings are set per call, not per model.
  model_->set_attention(how_);
  const autocast_scope amp(precision_.autocast, device_.type());
  // A batch without padding passes no mask, so SDPA may pick its mask-free kernels (flash).
  const bool padded = b.real_tokens < b.input_ids.numel();
  return model_->forward(b.input_ids, padded ? b.padding_mask : torch::Tensor());
}

void plain_executor::do_annotate(variant_result& r) {
  if (!precision_.autocast) return;
  const std::string& dtype = precision_.dtype;
  set_metric(r.metrics, {"amp_weight_bytes", static_cast<double>(cast_bytes_), metric_unit::bytes,
                         metric_direction::lower_is_better, "amp",
                         fmt::format("linear weights and biases held in {}, cast once when the variant was prepared "
                                     "instead of by autocast on every call",
                                     dtype),
                         ""});
  set_metric(r.metrics, {"amp_cast_ms", cast_ms_, metric_unit::ms, metric_direction::lower_is_better, "amp",
                         "one-off time to copy the model and cast its linears, before any pass (not in the timed "
                         "passes)",
                         ""});
}

}  // namespace attnbench
