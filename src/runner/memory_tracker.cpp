#include "runner/memory_tracker.hpp"

#include <algorithm>
#include <atomic>

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

struct peak_memory_scope::impl {
  torch::Device device;
  std::shared_ptr<cpu_allocation_hook> hook;
  std::unique_ptr<c10::DebugInfoGuard> guard;
  int64_t cuda_start = 0;
  int saved_log_level = 0;
};

// LibTorch's CPU allocator warns once when a block allocated before the hook is freed under it
// ("Memory block of unknown size…"): expected here (such frees are rightly not counted), so the
// scope raises the log threshold to errors while it is open.
constexpr int log_level_error = 2;

peak_memory_scope::peak_memory_scope(torch::Device device) : impl_(new impl{device, nullptr, nullptr, 0, 0}) {
  if (device.is_cpu()) {
    impl_->saved_log_level = FLAGS_caffe2_log_level;
    FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, log_level_error);
    impl_->hook = std::make_shared<cpu_allocation_hook>();
    impl_->guard = std::make_unique<c10::DebugInfoGuard>(c10::DebugInfoKind::PROFILER_STATE, impl_->hook);
  }
#ifdef ATTNBENCH_WITH_CUDA
  if (device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    const auto idx = device.index();
    resetPeakStats(idx);
    impl_->cuda_start = getDeviceStats(idx).allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].current;
  }
#endif
}

peak_memory_scope::~peak_memory_scope() {
  if (impl_->hook) {
    impl_->guard.reset();
    FLAGS_caffe2_log_level = impl_->saved_log_level;
  }
}

int64_t peak_memory_scope::peak_bytes() const {
  if (impl_->hook) return impl_->hook->peak();
#ifdef ATTNBENCH_WITH_CUDA
  if (impl_->device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    const auto stats = getDeviceStats(impl_->device.index());
    return stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak - impl_->cuda_start;
  }
#endif
  return -1;
}

int64_t peak_memory_scope::current_bytes() const {
  if (impl_->hook) return impl_->hook->current();
#ifdef ATTNBENCH_WITH_CUDA
  if (impl_->device.is_cuda()) {
    using namespace c10::cuda::CUDACachingAllocator;
    const auto stats = getDeviceStats(impl_->device.index());
    return stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].current -
           impl_->cuda_start;
  }
#endif
  return -1;
}

void peak_memory_scope::reset_peak() {
  if (impl_->hook) impl_->hook->reset_peak();
#ifdef ATTNBENCH_WITH_CUDA
  if (impl_->device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(impl_->device.index());
#endif
}

std::string peak_memory_scope::method() const {
  if (impl_->device.is_cpu()) return "cpu-allocator-hook";
  if (impl_->device.is_cuda()) return "cuda-caching-allocator-peak";
  return "none";
}

}  // namespace attnbench
