// Data parallel for decoders (issue 41 part 3): the worker threads of a generate-scenario variant
// with a "parallel" block, as the encoder's data_parallel_executor runs its workers
// (parallel/data_parallel_executor.hpp). Each worker is one thread, started with its own intra-op
// thread count (core/worker_thread.hpp: OpenMP's count is per thread), that waits for rounds; a
// round releases every worker at once, from one common start, and ends when the last one is done.
// What a worker generates, with which model copy and caches, is the caller's job: this class only
// starts, releases and joins the crew (generate_scenario.cpp holds the shares).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "common/thread_sync.hpp"
#include "core/worker_thread.hpp"
#include "runner/measurement_loop.hpp"

namespace attnbench {

class generate_workers {
 public:
  // What a worker runs in a round: its index and the round's common start (the clock reading
  // taken just before the workers were released), on the worker's own thread.
  using job = std::function<void(std::size_t worker, pass_clock::time_point start)>;

  // One worker per entry of `threads`: its intra-op threads (0 keeps the process default).
  explicit generate_workers(const std::vector<int64_t>& threads);
  ~generate_workers();
  generate_workers(const generate_workers&) = delete;
  generate_workers& operator=(const generate_workers&) = delete;

  // Runs `j` on every worker at once, each adopting the calling thread's dispatch context (a
  // peak-memory scope counts the workers' allocations too); returns the seconds from the common
  // start until the last worker finished. A worker that throws makes run() throw
  // std::runtime_error("worker W: ..."), after every worker has finished the round.
  double run(const job& j);

  std::size_t size() const { return workers_.size(); }
  // What each worker thread's at::get_num_threads() said after it set its count.
  std::vector<int64_t> threads_seen() const;

 private:
  struct worker {
    int64_t threads_seen = 0;
    int64_t seen_round = 0;
    std::exception_ptr error;
    std::thread thread;
  };
  struct round {
    dispatch_context context;
    const job* work = nullptr;
    pass_clock::time_point start;
  };
  void loop(std::size_t index);

  std::vector<std::unique_ptr<worker>> workers_;
  round_dispatch<round> rounds_;
};

}  // namespace attnbench
