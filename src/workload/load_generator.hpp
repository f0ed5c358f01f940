// The server scenario's load generator (runner/server_scenario.cpp): a thread of its own that
// delivers each arrival into an inbox at its scheduled time, while the serving thread batches and
// runs what has arrived. The two meet only here — the inbox, its flag and the condition variable,
// under one mutex — so this is the scenario's cross-thread part, and it needs no LibTorch: the
// sanitizer build runs its test under ThreadSanitizer (tests/workload/test_load_generator.cpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "workload/arrivals.hpp"
#include "workload/batcher.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

using load_clock = std::chrono::steady_clock;

// t0 + s seconds.
load_clock::time_point load_time(load_clock::time_point t0, double s);

// Delivers arrival i as queued_request{i, sample, its length, its scheduled time} into `inbox`
// at t0 + its time, then sets `all_arrived`; `wake` is notified after each. The destructor stops
// the thread (a pending arrival is not delivered) and joins it, so the consumer's every way out
// — exceptions included — ends the thread. The consumer holds `mutex` while it reads `inbox` and
// `all_arrived`, and waits on `wake`. `arrivals` and `data` must outlive this object.
class load_generator {
 public:
  load_generator(const std::vector<arrival>& arrivals, const dataset& data, load_clock::time_point t0);
  ~load_generator();
  load_generator(const load_generator&) = delete;
  load_generator& operator=(const load_generator&) = delete;

  std::mutex mutex;                  // guards inbox and all_arrived
  std::condition_variable wake;      // an arrival, or the end of arrivals
  std::deque<queued_request> inbox;
  bool all_arrived = false;

 private:
  void deliver(const std::vector<arrival>& arrivals, const dataset& data, load_clock::time_point t0);

  bool stop_ = false;
  std::condition_variable stopped_;
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace attnbench
