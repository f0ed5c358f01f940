// measure.max_memory_bytes: a cap on the CPU memory one variant's work may allocate, so a variant
// that would take the machine's memory ends as an OOM row instead of taking the run (and the
// machine) down with it (README "What happens when things go wrong").
//
// LibTorch's CPU allocator has no limit, so the first cap installs a counting allocator in front
// of it (c10::SetCPUAllocator, for the rest of the process): every CPU tensor allocation made
// after that is counted, and freed bytes are subtracted. A memory_cap_scope allows `bytes` on top
// of what was counted when it opened; an allocation that would go past that throws
// c10::OutOfMemoryError naming the size it tried, as the CUDA caching allocator does on a GPU.
// What the cap does not see: memory that is not a LibTorch CPU tensor (oneDNN's scratch buffers,
// the allocator's own bookkeeping). Concurrent allocations are checked one at a time against the
// count, so several threads together may pass the cap by at most their in-flight sizes.
#pragma once

#include <cstdint>

namespace attnbench {

class memory_cap_scope {
 public:
  // bytes <= 0: no cap, nothing installed.
  explicit memory_cap_scope(int64_t bytes);
  ~memory_cap_scope();
  memory_cap_scope(const memory_cap_scope&) = delete;
  memory_cap_scope& operator=(const memory_cap_scope&) = delete;

 private:
  bool active_ = false;
  int64_t saved_limit_ = -1;
};

// Bytes counted by the capping allocator now (0 before the first cap): for tests.
int64_t capped_bytes_in_use();

}  // namespace attnbench
