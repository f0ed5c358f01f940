#include "core/sdpa_backend_guard.hpp"

#include <condition_variable>
#include <mutex>

#include <ATen/Context.h>
#include <c10/util/Exception.h>

namespace attnbench {
namespace {

struct selection {
  std::mutex mutex;
  std::condition_variable released;
  sdpa_backend backend = sdpa_backend::auto_select;
  int holders = 0;
  bool flash = false, efficient = false, math = false, cudnn = false;  // saved by the first holder
};

selection& shared_selection() {
  static selection s;
  return s;
}

// Guards the calling thread holds, and the backend they hold (one at a time per thread).
thread_local int held_here = 0;
thread_local sdpa_backend held_backend = sdpa_backend::auto_select;

}  // namespace

sdpa_backend_guard::sdpa_backend_guard(sdpa_backend backend, c10::Device /*device*/) {
  TORCH_CHECK(held_here == 0 || held_backend == backend, "sdpa backend \"", to_string(backend),
              "\" asked for inside a scope that holds \"", to_string(held_backend),
              "\" on the same thread: it would wait for itself");
  selection& s = shared_selection();
  std::unique_lock<std::mutex> lock(s.mutex);
  s.released.wait(lock, [&] { return s.holders == 0 || s.backend == backend; });
  if (s.holders == 0) {
    s.backend = backend;
    if (backend != sdpa_backend::auto_select) {
      auto& ctx = at::globalContext();
      s.flash = ctx.userEnabledFlashSDP();
      s.efficient = ctx.userEnabledMemEfficientSDP();
      s.math = ctx.userEnabledMathSDP();
      s.cudnn = ctx.userEnabledCuDNNSDP();
      ctx.setSDPUseFlash(backend == sdpa_backend::flash);
      ctx.setSDPUseMemEfficient(backend == sdpa_backend::efficient);
      ctx.setSDPUseMath(backend == sdpa_backend::math);
      ctx.setSDPUseCuDNN(backend == sdpa_backend::cudnn);
    }
  }
  ++s.holders;
  ++held_here;
  held_backend = backend;
}

sdpa_backend_guard::~sdpa_backend_guard() {
  selection& s = shared_selection();
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    --held_here;
    if (--s.holders == 0 && s.backend != sdpa_backend::auto_select) {
      auto& ctx = at::globalContext();
      ctx.setSDPUseFlash(s.flash);
      ctx.setSDPUseMemEfficient(s.efficient);
      ctx.setSDPUseMath(s.math);
      ctx.setSDPUseCuDNN(s.cudnn);
    }
    if (s.holders == 0) s.backend = sdpa_backend::auto_select;
  }
  s.released.notify_all();
}

sdpa_selection_state current_sdpa_selection() {
  selection& s = shared_selection();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return {s.backend, s.holders};
}

}  // namespace attnbench
