#include "techniques/precision.hpp"

#include <ATen/autocast_mode.h>

namespace attnbench {

c10::ScalarType compute_dtype(precision_kind p) {
  switch (p) {
    case precision_kind::amp_bf16: return c10::ScalarType::BFloat16;
    case precision_kind::amp_fp16: return c10::ScalarType::Half;
    case precision_kind::fp32: break;
  }
  return c10::ScalarType::Float;
}

std::optional<c10::ScalarType> autocast_dtype(precision_kind p) {
  if (p == precision_kind::fp32) return std::nullopt;
  return compute_dtype(p);
}

autocast_scope::autocast_scope(std::optional<c10::ScalarType> dtype, c10::DeviceType device)
    : device_(device) {
  if (!dtype) return;
  active_ = true;
  prev_enabled_ = at::autocast::is_autocast_enabled(device_);
  prev_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_dtype(device_, *dtype);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::increment_nesting();
}

autocast_scope::~autocast_scope() {
  if (!active_) return;
  // Autocast caches low-precision copies of weights while nested; drop them when the outermost
  // scope closes so the next variant does not inherit them (and their memory).
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, prev_enabled_);
  at::autocast::set_autocast_dtype(device_, prev_dtype_);
}

autocast_state current_autocast_state(c10::DeviceType device) {
  return {device, at::autocast::is_autocast_enabled(device), at::autocast::get_autocast_dtype(device)};
}

autocast_state_scope::autocast_state_scope(const autocast_state& state)
    : previous_(current_autocast_state(state.device)), nested_(state.enabled) {
  at::autocast::set_autocast_dtype(state.device, state.dtype);
  at::autocast::set_autocast_enabled(state.device, state.enabled);
  if (nested_) at::autocast::increment_nesting();
}

autocast_state_scope::~autocast_state_scope() {
  if (nested_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(previous_.device, previous_.enabled);
  at::autocast::set_autocast_dtype(previous_.device, previous_.dtype);
}

}  // namespace attnbench
