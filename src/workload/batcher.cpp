#include "workload/batcher.hpp"

#include <algorithm>

namespace attnbench {

batcher::batcher(const batching_config& cfg, int64_t max_length)
    : cfg_(cfg), max_length_(max_length), delay_s_(cfg.max_queue_delay_ms / 1e3) {}

void batcher::push(const queued_request& r) { queue_.push_back(r); }

std::optional<double> batcher::deadline() const {
  if (queue_.empty()) return std::nullopt;
  return queue_.front().arrival_s + delay_s_;
}

std::optional<formed_batch> batcher::poll(double now_s, bool flush) {
  if (queue_.empty()) return std::nullopt;
  bool full = static_cast<int64_t>(queue_.size()) >= cfg_.max_batch();
  if (cfg_.kind == "dynamic" && !full) {
    // Enough queued tokens to fill the budget: waiting longer cannot make the batch bigger.
    int64_t tokens = 0;
    for (const auto& r : queue_) tokens += padded_length_of(r.length, cfg_, max_length_);
    full = tokens >= cfg_.max_tokens;
  }
  if (!(flush || full || now_s >= *deadline())) return std::nullopt;
  return take_batch();
}

formed_batch batcher::take_batch() {
  // Plan over the queue (rows = queue positions), then take the plan holding the oldest request.
  std::vector<int64_t> rows(queue_.size()), lengths(queue_.size());
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    rows[i] = static_cast<int64_t>(i);
    lengths[i] = queue_[i].length;
  }
  batch_plan chosen;
  if (cfg_.kind == "dynamic") {
    for (auto& p : plan_dynamic(rows, lengths, cfg_))
      if (std::count(p.rows.begin(), p.rows.end(), 0)) chosen = std::move(p);
  } else {
    chosen = plan_static(rows, lengths, cfg_.batch_size, cfg_.padding, max_length_).front();
  }
  formed_batch out;
  out.padded_length = chosen.padded_length;
  std::sort(chosen.rows.begin(), chosen.rows.end());
  for (auto r : chosen.rows) out.requests.push_back(queue_[static_cast<std::size_t>(r)]);
  for (auto it = chosen.rows.rbegin(); it != chosen.rows.rend(); ++it) queue_.erase(queue_.begin() + *it);
  return out;
}

}  // namespace attnbench
