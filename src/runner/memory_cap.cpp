#include "runner/memory_cap.hpp"

#include <atomic>
#include <mutex>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>

namespace attnbench {
namespace {

// Above LibTorch's own registration, so GetCPUAllocator() returns it once set.
constexpr uint8_t cap_priority = 200;

// Every allocation carries a 64-byte header holding its size in front of the data, so the data
// pointer is also the DataPtr's context (LibTorch's raw_allocate / raw_deallocate require that)
// and the deleter knows what to subtract. 64 keeps the data as aligned as the inner allocator's.
constexpr size_t header_bytes = 64;

class capping_allocator final : public c10::Allocator {
 public:
  explicit capping_allocator(c10::Allocator* inner) : inner_(inner) {}

  c10::DataPtr allocate(size_t n) override {
    const auto bytes = static_cast<int64_t>(n);
    const int64_t limit = limit_.load();
    const int64_t now = in_use_.load();
    if (limit >= 0 && now + bytes > limit)
      TORCH_CHECK_WITH(OutOfMemoryError, false,
                       fmt::format("CPU out of memory under measure.max_memory_bytes: tried to allocate {} bytes "
                                   "with {} bytes of the variant's cap of {} in use",
                                   bytes, now - base_.load(), limit - base_.load()));
    void* base = inner_->raw_allocate(n + header_bytes);
    *static_cast<int64_t*>(base) = bytes;
    in_use_ += bytes;
    void* data = static_cast<char*>(base) + header_bytes;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  int64_t in_use() const { return in_use_.load(); }
  int64_t limit() const { return limit_.load(); }
  void set_limit(int64_t base, int64_t limit) {
    base_.store(base);
    limit_.store(limit);
  }

 private:
  static void release(void* data);

  c10::Allocator* inner_;
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> base_{0};
  std::atomic<int64_t> limit_{-1};  // absolute, in in_use_'s terms; -1: no cap
};

capping_allocator* installed = nullptr;

void capping_allocator::release(void* data) {
  if (!data) return;
  void* base = static_cast<char*>(data) - header_bytes;
  installed->in_use_ -= *static_cast<int64_t*>(base);
  installed->inner_->raw_deallocate(base);
}

capping_allocator& allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Never destroyed: tensors allocated through it may outlive every scope.
    installed = new capping_allocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(installed, cap_priority);
  });
  return *installed;
}

}  // namespace

memory_cap_scope::memory_cap_scope(int64_t bytes) {
  if (bytes <= 0) return;
  capping_allocator& a = allocator();
  saved_limit_ = a.limit();
  const int64_t base = a.in_use();
  a.set_limit(base, base + bytes);
  active_ = true;
}

memory_cap_scope::~memory_cap_scope() {
  if (active_) allocator().set_limit(0, saved_limit_);
}

int64_t capped_bytes_in_use() { return installed ? installed->in_use() : 0; }

}  // namespace attnbench
