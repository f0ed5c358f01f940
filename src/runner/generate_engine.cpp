#include "runner/generate_engine.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace attnbench {

struct generation_engine::running {
  generated_sequence out;
  kv_cache cache;
  int64_t produced = 0;
  int64_t last = 0;  // the last token's id
};

generation_engine::generation_engine(DecoderLM& model, const dataset& data, torch::Device device, settings s,
                                     std::function<double()> clock)
    : model_(model), data_(data), device_(device), s_(s), clock_(std::move(clock)) {
  TORCH_CHECK(s_.slots >= 1 && s_.new_tokens >= 1, "generation_engine: slots and new_tokens must be at least 1");
}

generation_engine::~generation_engine() = default;

int64_t generation_engine::capacity_of(int64_t sample) const {
  return static_cast<int64_t>(data_.samples.at(static_cast<std::size_t>(sample)).size()) + s_.new_tokens;
}

bool generation_engine::can_admit(int64_t sample) const {
  if (static_cast<int64_t>(active_.size()) >= s_.slots) return false;
  if (s_.max_cache_tokens > 0 && !active_.empty() && cache_tokens_ + capacity_of(sample) > s_.max_cache_tokens)
    return false;
  return s_.continuous || active_.empty() || batch_open_;
}

void generation_engine::admit(const generation_request& r) {
  TORCH_CHECK(can_admit(r.sample), "generation_engine: no free slot");
  if (s_.max_cache_tokens > 0 && capacity_of(r.sample) > s_.max_cache_tokens)
    throw std::invalid_argument(fmt::format("request {} needs a KV cache of {} positions (its prompt + max_new_tokens); "
                                            "batching.max_tokens is {}",
                                            r.id, capacity_of(r.sample), s_.max_cache_tokens));
  if (active_.empty()) batch_open_ = true;
  const auto& prompt = data_.samples.at(static_cast<std::size_t>(r.sample));
  const auto p = static_cast<int64_t>(prompt.size());
  auto seq = std::make_unique<running>();
  seq->out.id = r.id;
  seq->out.sample = r.sample;
  seq->out.arrival_s = r.arrival_s;
  seq->out.tokens = torch::empty({s_.new_tokens}, torch::kLong);
  const double t0 = clock_();
  const auto ids = torch::tensor(prompt, torch::kLong).view({1, p}).to(device_);
  seq->cache = make_kv_cache(model_->dims(), 1, p + s_.new_tokens, s_.cache_dtype, device_);
  seq->last = model_->forward_last(ids, seq->cache).argmax(-1).item<int64_t>();  // waits for the device
  const double t1 = clock_();
  seq->out.tokens.data_ptr<int64_t>()[0] = seq->last;
  seq->out.token_s.push_back(t1);
  seq->out.prefill_ms = (t1 - t0) * 1e3;
  seq->produced = 1;
  totals.prefill_ms += seq->out.prefill_ms;
  totals.prefill_tokens += p;
  cache_tokens_ += seq->cache.capacity;
  active_.push_back(std::move(seq));
  int64_t bytes = 0;
  for (const auto& a : active_) bytes += a->cache.bytes();
  totals.peak_cache_bytes = std::max(totals.peak_cache_bytes, bytes);
  retire_done();
}

void generation_engine::step() {
  if (active_.empty()) return;
  batch_open_ = false;
  const auto b = static_cast<int64_t>(active_.size());
  std::vector<int64_t> last;
  std::vector<kv_cache*> caches;
  int64_t filled = 0, allocated = 0;
  for (auto& a : active_) {
    last.push_back(a->last);
    caches.push_back(&a->cache);
    totals.context_sum += a->cache.length + 1;
    filled += a->cache.length + 1;
    allocated += a->cache.capacity;
  }
  const double t0 = clock_();
  const auto ids = torch::tensor(last, torch::kLong).view({b, 1}).to(device_);
  const auto next = model_->step_rows(ids, caches).argmax(-1).cpu();  // waits for the device
  const double t1 = clock_();
  const auto* n = next.data_ptr<int64_t>();
  for (int64_t r = 0; r < b; ++r) {
    auto& a = *active_[static_cast<std::size_t>(r)];
    a.last = n[r];
    a.out.tokens.data_ptr<int64_t>()[a.produced] = a.last;
    a.out.token_s.push_back(t1);
    ++a.produced;
  }
  totals.decode_ms += (t1 - t0) * 1e3;
  totals.step_ms.push_back((t1 - t0) * 1e3);
  totals.decode_tokens += b;
  ++totals.steps;
  totals.peak_active = std::max(totals.peak_active, b);
  totals.fill_sum += static_cast<double>(filled) / static_cast<double>(allocated);
  retire_done();
}

void generation_engine::retire_done() {
  auto keep = active_.begin();
  for (auto it = active_.begin(); it != active_.end(); ++it) {
    if ((*it)->produced >= s_.new_tokens) {
      cache_tokens_ -= (*it)->cache.capacity;
      finished.push_back(std::move((*it)->out));
    } else {
      if (keep != it) *keep = std::move(*it);
      ++keep;
    }
  }
  active_.erase(keep, active_.end());
}

std::vector<generated_sequence> generate_all(generation_engine& engine, const std::vector<generation_request>& requests) {
  std::size_t next = 0;
  while (next < requests.size() || !engine.idle()) {
    while (next < requests.size() && engine.can_admit(requests[next].sample)) engine.admit(requests[next++]);
    engine.step();
  }
  return std::move(engine.finished);
}

}  // namespace attnbench
