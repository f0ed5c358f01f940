#include "core/sdpa_backend_guard.hpp"

#include <ATen/Context.h>

namespace attnbench {

sdpa_backend_guard::sdpa_backend_guard(sdpa_backend backend, c10::Device /*device*/) {
  if (backend == sdpa_backend::auto_select) return;
  auto& ctx = at::globalContext();
  flash_ = ctx.userEnabledFlashSDP();
  efficient_ = ctx.userEnabledMemEfficientSDP();
  math_ = ctx.userEnabledMathSDP();
  cudnn_ = ctx.userEnabledCuDNNSDP();
  active_ = true;
  ctx.setSDPUseFlash(backend == sdpa_backend::flash);
  ctx.setSDPUseMemEfficient(backend == sdpa_backend::efficient);
  ctx.setSDPUseMath(backend == sdpa_backend::math);
  ctx.setSDPUseCuDNN(backend == sdpa_backend::cudnn);
}

sdpa_backend_guard::~sdpa_backend_guard() {
  if (!active_) return;
  auto& ctx = at::globalContext();
  ctx.setSDPUseFlash(flash_);
  ctx.setSDPUseMemEfficient(efficient_);
  ctx.setSDPUseMath(math_);
  ctx.setSDPUseCuDNN(cudnn_);
}

}  // namespace attnbench
