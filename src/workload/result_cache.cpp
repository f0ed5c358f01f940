#include "workload/result_cache.hpp"

#include "common/hash.hpp"

namespace attnbench {

uint64_t result_cache::hash(const std::vector<int64_t>& tokens) {
  fnv1a64 h;
  h.update(tokens.data(), tokens.size() * sizeof(int64_t));
  return h.value();
}

std::optional<int64_t> result_cache::find_or_insert(const std::vector<int64_t>& tokens, int64_t row) {
  ++lookups_;
  auto& bucket = entries_[hash(tokens)];
  for (const auto& [seq, first_row] : bucket) {
    if (*seq == tokens) {
      ++hits_;
      return first_row;
    }
  }
  // The caller's token vector outlives the cache (the dataset owns it), so a pointer suffices.
  bucket.emplace_back(&tokens, row);
  return std::nullopt;
}

void result_cache::clear() {
  entries_.clear();
  hits_ = 0;
  lookups_ = 0;
}

}  // namespace attnbench
