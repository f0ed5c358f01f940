#include "core/worker_thread.hpp"

#include <future>

#include <ATen/Parallel.h>

namespace attnbench {

std::thread start_worker_thread(int64_t threads, std::function<void()> body, int* threads_seen) {
  const int caller = at::get_num_threads();
  std::promise<int> ready;
  std::future<int> seen = ready.get_future();
  std::thread t([threads, ready = std::move(ready), body = std::move(body)]() mutable {
    if (threads > 0) at::set_num_threads(static_cast<int>(threads));  // this thread's OpenMP team size
    ready.set_value(at::get_num_threads());
    body();
  });
  const int n = seen.get();
  if (threads_seen) *threads_seen = n;
  at::set_num_threads(caller);  // the process-wide default (and MKL's) the worker changed; the caller's own is unchanged
  return t;
}

}  // namespace attnbench
