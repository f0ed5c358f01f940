// The result cache: requests whose token ids are identical to an earlier one's are answered
// with that one's logits instead of being computed again. The cache maps a token sequence to
// the row that first carried it; the caller keeps the logits. Full sequences are compared, so a
// hash collision can never return another sequence's result.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace attnbench {

class result_cache {
 public:
  // The row that first carried `tokens`, or nullopt after recording `row` as that row.
  std::optional<int64_t> find_or_insert(const std::vector<int64_t>& tokens, int64_t row);
  void clear();
  int64_t hits() const { return hits_; }
  int64_t lookups() const { return lookups_; }

 private:
  static uint64_t hash(const std::vector<int64_t>& tokens);
  std::unordered_map<uint64_t, std::vector<std::pair<const std::vector<int64_t>*, int64_t>>> entries_;
  int64_t hits_ = 0;
  int64_t lookups_ = 0;
};

}  // namespace attnbench
