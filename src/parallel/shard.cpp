#include "parallel/shard.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace attnbench {

int64_t tokens_of(const dataset& data, const std::vector<int64_t>& rows) {
  int64_t n = 0;
  for (auto r : rows) n += static_cast<int64_t>(data.samples[static_cast<std::size_t>(r)].size());
  return n;
}

std::vector<std::vector<int64_t>> shard_by_tokens(const dataset& data, const std::vector<int64_t>& rows,
                                                  int64_t workers) {
  if (workers < 1) throw std::invalid_argument("shard_by_tokens: workers must be >= 1");
  const auto length = [&](int64_t r) { return static_cast<int64_t>(data.samples[static_cast<std::size_t>(r)].size()); };
  std::vector<int64_t> order(rows);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return length(a) > length(b); });
  std::vector<std::vector<int64_t>> shards(static_cast<std::size_t>(workers));
  std::vector<int64_t> load(static_cast<std::size_t>(workers), 0);
  for (auto r : order) {
    const auto lightest = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shards[lightest].push_back(r);
    load[lightest] += length(r);
  }
  for (auto& s : shards) std::sort(s.begin(), s.end());
  return shards;
}

}  // namespace attnbench
