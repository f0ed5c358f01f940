#include "runner/model_placement.hpp"

#include <ATen/Context.h>

#include "core/device.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace attnbench {

int64_t device_allocated_bytes(torch::Device device) {
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    at::globalContext().lazyInitDevice(at::kCUDA);  // the statistics exist once CUDA is initialised
    const auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return getDeviceStats(device.index()).allocated_bytes[aggregate].current;
  }
#endif
  (void)device;
  return -1;
}

model_placement::model_placement(EncoderClassifier host, torch::Device device, int64_t host_bytes, placer place)
    : host_(std::move(host)), device_(device), place_(std::move(place)) {
  if (device_.is_cpu() && !place_) {
    device_model_ = host_;
    device_bytes_ = host_bytes;
  }
}

const EncoderClassifier& model_placement::on_device() {
  if (device_model_) return device_model_;
  const int64_t before = device_allocated_bytes(device_);
  // A local until it is complete: when a parameter does not fit, the ones copied so far are
  // freed with it.
  EncoderClassifier copy = place_ ? place_(host_, device_) : replicate(host_, device_);
  synchronize(device_);
  device_bytes_ = before < 0 ? -1 : device_allocated_bytes(device_) - before;
  device_model_ = copy;
  return device_model_;
}

}  // namespace attnbench
