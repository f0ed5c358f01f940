// Peak memory of one pass of one variant.
//
// CUDA: the caching allocator's peak allocated bytes (reset at the start of the scope), minus
//       what was allocated when the scope opened — the pass's own working memory.
// CPU:  LibTorch keeps no CPU allocator statistics, so this scope installs an allocator hook:
//       a c10::MemoryReportingInfoBase that LibTorch's CPU allocator calls on every allocation
//       and free made on a thread that carries the hook. The running sum of those sizes, started
//       at 0, peaks at the pass's working memory (activations, masks, outputs); weights allocated
//       before the scope are not counted. The hook is thread-safe and lives in LibTorch's
//       thread-local debug info: the scope's own thread carries it, and so does every thread a
//       variant dispatches its work to (data-parallel workers, pipeline stages), because those
//       adopt the dispatching thread's debug info for the pass (core/worker_thread.hpp).
//       The sum then covers every such thread at once. Allocations inside OpenMP intra-op threads
//       (some oneDNN scratch buffers) are not seen: a lower bound of the true working set.
// Several devices: a variant whose workers or stages run on other devices too measures each of
// them (peak_bytes_on): the CPU by the hook, each CUDA device by its own allocator statistics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace attnbench {

class peak_memory_scope {
 public:
  explicit peak_memory_scope(torch::Device device);
  // `device` and every device of `also` (canonical: "cuda:N"; repeats are ignored).
  peak_memory_scope(torch::Device device, const std::vector<torch::Device>& also);
  ~peak_memory_scope();
  peak_memory_scope(const peak_memory_scope&) = delete;
  peak_memory_scope& operator=(const peak_memory_scope&) = delete;

  int64_t peak_bytes()
      const;  // so far (since the start or the last reset_peak), relative to the scope's start
  int64_t current_bytes() const;  // allocated now, relative to the scope's start
  void reset_peak();              // the peak restarts from the current level
  std::string method() const;
  // The peak on one of the scope's devices, relative to the scope's start (-1: not one of them).
  int64_t peak_bytes_on(torch::Device device) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace attnbench
