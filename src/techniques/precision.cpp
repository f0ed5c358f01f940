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

autocast_scope::autocast_scope(precision_kind precision, c10::DeviceType device) : device_(device) {
  if (precision == precision_kind::fp32) return;
  active_ = true;
  prev_enabled_ = at::autocast::is_autocast_enabled(device_);
  prev_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_dtype(device_, compute_dtype(precision));
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

}  // namespace attnbench
