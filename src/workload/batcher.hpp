// The server scenario's batcher: queues arriving requests and decides when a batch goes.
//
// A batch is formed when max_batch requests wait, when (dynamic) the queued requests' padded
// tokens reach max_tokens, or when the oldest has waited max_queue_delay_ms. The batch always
// contains the oldest request; with dynamic batching it is the batch the length-sorted greedy
// planner (plan_dynamic, within the token budget, whatever cfg.planner says: a queue is cut
// again at every poll) puts the oldest request in, otherwise the
// next requests in arrival order. Time is passed in,
// never read, so tests drive it with a fake clock.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "workload/batch_plan.hpp"

namespace attnbench {

struct queued_request {
  int64_t id = 0;
  int64_t sample = 0;
  int64_t length = 0;
  double arrival_s = 0;
};

struct formed_batch {
  std::vector<queued_request> requests;
  int64_t padded_length = 0;
};

class batcher {
 public:
  batcher(const batching_config& cfg, int64_t max_length);
  void push(const queued_request& r);
  // The batch to run now, if one is due at `now_s`; `flush` forms one from whatever waits.
  std::optional<formed_batch> poll(double now_s, bool flush = false);
  // When the oldest queued request's window closes (nullopt when the queue is empty).
  std::optional<double> deadline() const;
  std::size_t size() const { return queue_.size(); }

 private:
  formed_batch take_batch();
  batching_config cfg_;
  int64_t max_length_;
  double delay_s_;
  std::deque<queued_request> queue_;  // arrival order
};

}  // namespace attnbench
