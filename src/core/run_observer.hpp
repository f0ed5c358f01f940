// What a run tells a watcher while it goes (live metrics, TensorBoard scalars): the measurement
// loop and the scenarios call these as the work happens. Every method has a no-op default, so an
// observer implements only what it shows. Contract for implementers: called on the thread that
// runs the passes, between passes or batches, never inside a timed region's clock; each call must
// be cheap (a few atomic updates or a short lock) and must not throw.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

class run_observer {
 public:
  virtual ~run_observer() = default;

  // A variant's check pass ran. cache_hit_ratio: the share of its samples its result cache
  // answers (negative when it has none); peak_memory_bytes: the check pass's peak (negative: not
  // measured).
  virtual void on_variant_ready(const std::string& /*variant*/, double /*cache_hit_ratio*/,
                                double /*peak_memory_bytes*/) {}
  // The train scenario's check pass: the loss of each optimizer step, in order.
  virtual void on_train_losses(const std::string& /*variant*/, const std::vector<double>& /*losses*/) {}
  // A warm-up or timed pass of `variant`: `samples` and `tokens` it served, its wall seconds, and
  // each unit's (batch or training step) milliseconds. timed: whether it counts in the statistics.
  virtual void on_pass(const std::string& /*variant*/, bool /*timed*/, int64_t /*samples*/, int64_t /*tokens*/,
                       double /*seconds*/, const std::vector<double>& /*unit_ms*/) {}
  // The server scenario begins serving `variant` at offered_rate requests/s (NaN: a trace).
  virtual void on_server_rate(const std::string& /*variant*/, double /*offered_rate*/) {}
  // The server formed a batch of batch_size requests, leaving queue_depth requests waiting.
  virtual void on_server_batch(const std::string& /*variant*/, int64_t /*batch_size*/, int64_t /*queue_depth*/) {}
  // A request completed `latency_s` after it arrived; cached: answered by the result cache.
  virtual void on_server_request(const std::string& /*variant*/, double /*latency_s*/, bool /*cached*/) {}
  // One offered rate's latency percentiles, in milliseconds, once it is served.
  virtual void on_server_point(const std::string& /*variant*/, double /*offered_rate*/, double /*p50_ms*/,
                               double /*p90_ms*/, double /*p99_ms*/, double /*achieved_rate*/) {}
};

}  // namespace attnbench
