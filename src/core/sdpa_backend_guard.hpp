// Selects which scaled-dot-product-attention backends LibTorch may use, for one scope.
//
// The backend flags live on at::globalContext() and are process-wide: this guard saves all of
// them, enables only the requested backend (or leaves them alone for "auto"), and restores them
// on destruction. Two threads running attention with different backends at the same time would
// race on these flags; the runner runs variants one at a time.
#pragma once

#include <c10/core/Device.h>

#include "config/config.hpp"

namespace attnbench {

class sdpa_backend_guard {
 public:
  sdpa_backend_guard(sdpa_backend backend, c10::Device device);
  ~sdpa_backend_guard();
  sdpa_backend_guard(const sdpa_backend_guard&) = delete;
  sdpa_backend_guard& operator=(const sdpa_backend_guard&) = delete;

 private:
  bool active_ = false;
  bool flash_ = false, efficient_ = false, math_ = false, cudnn_ = false;
};

}  // namespace attnbench
