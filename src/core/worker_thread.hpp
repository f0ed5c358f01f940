// Worker threads with their own intra-op thread count: data-parallel workers and pipeline stages.
//
// This LibTorch is built on OpenMP, where at::set_num_threads called in a thread sets that thread's
// OpenMP team size (OpenMP's nthreads-var is per thread) — but it also sets process-wide state:
// the default that threads started later begin from, and MKL's thread count. So workers start one
// at a time through start_worker_thread(), and the caller's count is put back afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include <c10/util/ThreadLocalDebugInfo.h>

namespace attnbench {

// What a worker thread takes over from the thread that dispatched its work: LibTorch's
// thread-local debug info, which holds a peak-memory scope's allocation hook
// (runner/memory_tracker.hpp) and the profiler's state, so that a variant's memory figure covers
// every thread it uses. Capture it where the work is dispatched; the worker holds
// `c10::DebugInfoGuard adopt(context);` while the work runs (a null context changes nothing).
using dispatch_context = std::shared_ptr<c10::ThreadLocalDebugInfo>;
inline dispatch_context capture_dispatch_context() { return c10::ThreadLocalDebugInfo::current(); }

// Starts `body` on a new thread that first sets its intra-op threads to `threads` (0 keeps the
// default), and returns once it has; `threads_seen` (may be null) receives what
// at::get_num_threads() then says in that thread. The caller's count is restored as the process
// default before returning. Not for concurrent use: start workers one after another.
std::thread start_worker_thread(int64_t threads, std::function<void()> body, int* threads_seen);

}  // namespace attnbench
