#include "techniques/recompute.hpp"

#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

namespace attnbench {
namespace {

at::Generator cuda_generator([[maybe_unused]] c10::DeviceIndex index) {
#ifdef ATTNBENCH_WITH_CUDA
  return at::cuda::detail::getDefaultCUDAGenerator(index);
#else
  TORCH_CHECK(false, "this build has no CUDA");
#endif
}

rng_snapshot capture_rng(const torch::Device& device) {
  rng_snapshot s;
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  {
    const std::lock_guard<std::mutex> lock(cpu.mutex());
    s.cpu = cpu.get_state();
  }
  if (device.is_cuda()) {
    s.cuda_index = device.index();
    at::Generator gen = cuda_generator(s.cuda_index);
    const std::lock_guard<std::mutex> lock(gen.mutex());
    s.cuda = gen.get_state();
  }
  return s;
}

void restore_rng(const rng_snapshot& s) {
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  {
    const std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(s.cpu);
  }
  if (s.cuda) {
    at::Generator gen = cuda_generator(s.cuda_index);
    const std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(*s.cuda);
  }
}

}  // namespace

recompute_point capture_recompute_point(torch::Device device) {
  return recompute_point{device, current_autocast_state(device.type()), capture_rng(device)};
}

// Members initialise in declaration order: the current generators are saved before the point's
// are installed.
recompute_scope::recompute_scope(const recompute_point& point)
    : current_(capture_rng(point.device)), autocast_(point.autocast) {
  restore_rng(point.rng);
}

recompute_scope::~recompute_scope() { restore_rng(current_); }

autocast_cache_off::autocast_cache_off() : previous_(at::autocast::is_autocast_cache_enabled()) {
  at::autocast::set_autocast_cache_enabled(false);
}

autocast_cache_off::~autocast_cache_off() { at::autocast::set_autocast_cache_enabled(previous_); }

}  // namespace attnbench
