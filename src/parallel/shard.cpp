#include "parallel/shard.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "report/result.hpp"
#include "stats/summary.hpp"

namespace attnbench {

int64_t tokens_of(const dataset& data, const std::vector<int64_t>& rows) {
  int64_t n = 0;
  for (auto r : rows) n += static_cast<int64_t>(data.samples[static_cast<std::size_t>(r)].size());
  return n;
}

double median_imbalance(const std::vector<std::vector<double>>& per_worker) {
  std::vector<double> ratios;
  for (std::size_t k = 0; !per_worker.empty() && k < per_worker.front().size(); ++k) {
    double slowest = 0, sum = 0;
    for (const auto& w : per_worker) {
      slowest = std::max(slowest, w[k]);
      sum += w[k];
    }
    ratios.push_back(slowest / (sum / static_cast<double>(per_worker.size())));
  }
  return ratios.empty() ? not_a_number : percentile(ratios, 50);
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
