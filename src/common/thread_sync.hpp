// The hand-offs between threads of the parallel executors, apart from what they hand over: the
// data-parallel workers' rounds (parallel/data_parallel_executor.cpp) and the pipeline stages'
// queues and flush count (techniques/pipeline_executor.cpp). Header-only and torch-free, so the
// sanitizer build runs their tests under ThreadSanitizer (tests/common/test_thread_sync.cpp):
// the executors' tensors move through these, and LibTorch itself cannot be checked by TSan.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>

namespace attnbench {

// A blocking queue between threads: push from any thread, pop waits for an item.
template <class T>
class blocking_queue {
 public:
  void push(T item) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(item));
    }
    changed_.notify_one();
  }
  T pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !items_.empty(); });
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<T> items_;
};

// Counts threads that finished something; one thread waits until n have.
class completion_counter {
 public:
  void reset() {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = 0;
  }
  void add() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ++done_;
    }
    changed_.notify_all();
  }
  void wait_for(int64_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return done_ >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t done_ = 0;
};

// Rounds of work for a fixed crew of worker threads, started by one dispatching thread: the
// dispatcher's run_round() hands every worker `context` and returns once `workers` of them
// have called finish(); each worker loops on next_round(). What a worker publishes inside
// finish() (under the lock) is visible to the dispatcher when run_round() returns.
template <class Context>
class round_dispatch {
 public:
  // Dispatcher: one round, every worker once; returns when all `workers` finished it.
  void run_round(Context context, int64_t workers) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      context_ = std::move(context);
      finished_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return finished_ == workers; });
  }
  // Dispatcher: drops the round's context (it may hold something that ends with the round).
  void clear_context() {
    const std::lock_guard<std::mutex> lock(mutex_);
    context_ = Context{};
  }
  // Worker: waits for a round it has not run (`seen`: the last it ran), or stop(). Returns false
  // on stop; else sets `context` to the round's.
  bool next_round(int64_t& seen, Context& context) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return false;
    seen = generation_;
    context = context_;
    return true;
  }
  // Worker: its round is done; `publish()` runs under the lock (store the result there).
  template <class Publish>
  void finish(Publish&& publish) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      publish();
      ++finished_;
    }
    done_.notify_all();
  }
  // Ends every worker's next_round() with false.
  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;  // workers wait here for the next round
  std::condition_variable done_;  // the dispatcher waits here for the workers
  int64_t generation_ = 0;        // rounds started
  int64_t finished_ = 0;          // workers done with the current round
  Context context_{};
  bool stopping_ = false;
};

}  // namespace attnbench
