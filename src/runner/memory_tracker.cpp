#include "runner/memory_tracker.hpp"

#include <algorithm>
#include <atomic>

#include <ATen/Context.h>
#include <c10/core/Allocator.h>
#include <c10/util/Logging.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#ifdef ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace attnbench {
namespace {

// Called by the allocator on whichever thread carries it: several at once when a variant's
// worker threads adopted the scope, so the running sum and its peak are atomics.
class cpu_allocation_hook : public c10::MemoryReportingInfoBase {
 public:
  void reportMemoryUsage(void* /*ptr*/, int64_t alloc_size, size_t /*total_allocated*/, size_t /*total_reserved*/,
                         c10::Device device) override {
    if (!device.is_cpu()) return;
    const int64_t now = current_.fetch_add(alloc_size) + alloc_size;  // alloc_size < 0 on free
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
  }
  bool memoryProfilingEnabled() const override { return true; }
  int64_t peak() const { return peak_.load(); }
  int64_t current() const { return current_.load(); }
  void reset_peak() { peak_.store(current_.load()); }

 private:
  std::atomic<int64_t> current_{0};
  std::atomic<int64_t> peak_{0};
};

}  // namespace

#ifdef ATTNBENCH_WITH_CUDA
namespace {
constexpr auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
}  // namespace
#endif

struct peak_memory_scope::impl {
  torch::Device device;                  // the first: what peak_bytes() and method() describe
  std::vector<torch::Device> devices;    // distinct, `device` first
  std::vector<int64_t> cuda_start;       // per device: allocated bytes when the scope opened
  std::shared_ptr<cpu_allocation_hook> hook;  // when a device is the CPU
  std::unique_ptr<c10::DebugInfoGuard> guard;
  int saved_log_level = 0;
};

// LibTorch's CPU allocator warns once when a block allocated before the hook is freed under it
// ("Memory block of unknown size…"): expected here (such frees are rightly not counted), so the
// scope raises the log threshold to errors while it is open.
constexpr int log_level_error = 2;

peak_memory_scope::peak_memory_scope(torch::Device device) : peak_memory_scope(device, {}) {}

peak_memory_scope::peak_memory_scope(torch::Device device, const std::vector<torch::Device>& also)
    : impl_(new impl{device, {device}, {}, nullptr, nullptr, 0}) {
  for (const auto& d : also)
    if (std::find(impl_->devices.begin(), impl_->devices.end(), d) == impl_->devices.end())
      impl_->devices.push_back(d);
  impl_->cuda_start.assign(impl_->devices.size(), 0);
  for (std::size_t k = 0; k < impl_->devices.size(); ++k) {
    const torch::Device d = impl_->devices[k];
    if (d.is_cpu() && !impl_->hook) {
      impl_->saved_log_level = FLAGS_caffe2_log_level;
      FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, log_level_error);
      impl_->hook = std::make_shared<cpu_allocation_hook>();
      impl_->guard = std::make_unique<c10::DebugInfoGuard>(c10::DebugInfoKind::PROFILER_STATE, impl_->hook);
    }
#ifdef ATTNBENCH_WITH_CUDA
    if (d.is_cuda()) {
      using namespace c10::cuda::CUDACachingAllocator;
      // The allocator's statistics exist once CUDA is initialised: a scope may open before the
      // process's first CUDA allocation.
      at::globalContext().lazyInitDevice(at::kCUDA);
      resetPeakStats(d.index());
      impl_->cuda_start[k] = getDeviceStats(d.index()).allocated_bytes[aggregate].current;
    }
#endif
  }
}

peak_memory_scope::~peak_memory_scope() {
  if (impl_->hook) {
    impl_->guard.reset();
    FLAGS_caffe2_log_level = impl_->saved_log_level;
  }
}

int64_t peak_memory_scope::peak_bytes_on(torch::Device device) const {
  const auto it = std::find(impl_->devices.begin(), impl_->devices.end(), device);
  if (it == impl_->devices.end()) return -1;
  if (device.is_cpu()) return impl_->hook->peak();
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    const auto k = static_cast<std::size_t>(it - impl_->devices.begin());
    return getDeviceStats(device.index()).allocated_bytes[aggregate].peak - impl_->cuda_start[k];
  }
#endif
  return -1;
}

int64_t peak_memory_scope::peak_bytes() const { return peak_bytes_on(impl_->device); }

int64_t peak_memory_scope::current_bytes() const {
  if (impl_->device.is_cpu()) return impl_->hook->current();
#ifdef ATTNBENCH_WITH_CUDA
  if (impl_->device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    return getDeviceStats(impl_->device.index()).allocated_bytes[aggregate].current - impl_->cuda_start[0];
  }
#endif
  return -1;
}

void peak_memory_scope::reset_peak() {
  if (impl_->hook) impl_->hook->reset_peak();
#ifdef ATTNBENCH_WITH_CUDA
  for (const auto& d : impl_->devices)
    if (d.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(d.index());
#endif
}

std::string peak_memory_scope::method() const {
  if (impl_->device.is_cpu()) return "cpu-allocator-hook";
  if (impl_->device.is_cuda()) return "cuda-caching-allocator-peak";
  return "none";
}

}  // namespace attnbench
