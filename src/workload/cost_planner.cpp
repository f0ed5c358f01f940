#include "workload/cost_planner.hpp"

#include <algorithm>
#include <limits>

namespace attnbench {

double batch_cost_model::cost(int64_t rows, int64_t padded_length) const {
  const auto b = static_cast<double>(rows);
  const auto s = static_cast<double>(padded_length);
  return b * s + attention * b * s * s + per_row * b + per_batch;
}

std::vector<int64_t> min_cost_batch_sizes(const std::vector<int64_t>& sorted_lengths, int64_t max_tokens,
                                          int64_t max_batch_size, bool split_on_length_change,
                                          const batch_cost_model& model) {
  const std::size_t n = sorted_lengths.size();
  // best[j]: least cost of the first j rows; size[j]: rows in the last batch of that cut.
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<int64_t> size(n + 1, 0);
  best[0] = 0;
  for (std::size_t j = 1; j <= n; ++j) {
    const int64_t len = sorted_lengths[j - 1];  // the batch's padded length: its last row's
    for (int64_t k = 1; k <= max_batch_size && static_cast<std::size_t>(k) <= j; ++k) {
      // One row always fits: a row longer than the budget gets a batch of its own, as greedily.
      if (k > 1 && k * len > max_tokens) break;
      const std::size_t first = j - static_cast<std::size_t>(k);
      if (split_on_length_change && sorted_lengths[first] != len) break;
      const double c = best[first] + model.cost(k, len);
      // On a tie the bigger batch wins: fewer batches for the same modelled cost.
      if (c <= best[j]) {
        best[j] = c;
        size[j] = k;
      }
    }
  }
  std::vector<int64_t> sizes;
  for (std::size_t j = n; j > 0; j -= static_cast<std::size_t>(size[j])) sizes.push_back(size[j]);
  std::reverse(sizes.begin(), sizes.end());
  return sizes;
}

std::vector<batch_plan> plan_min_cost(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                      const batching_config& cfg, const batch_cost_model& model) {
  // The same order as greedy filling (batch_plan.cpp): stable sort by padded length.
  std::vector<int64_t> order = rows;
  const auto padded = [&](int64_t row) {
    return padded_length_of(lengths[static_cast<std::size_t>(row)], cfg, /*max_length=*/0);
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return padded(a) < padded(b); });
  std::vector<int64_t> sorted(order.size());
  std::transform(order.begin(), order.end(), sorted.begin(), padded);
  const auto sizes = min_cost_batch_sizes(sorted, cfg.max_tokens, cfg.max_batch_size,
                                          cfg.grouping == grouping_kind::bucketed, model);
  std::vector<batch_plan> out;
  std::size_t next = 0;
  for (int64_t k : sizes) {
    batch_plan p;
    p.rows.assign(order.begin() + static_cast<std::ptrdiff_t>(next),
                  order.begin() + static_cast<std::ptrdiff_t>(next + static_cast<std::size_t>(k)));
    next += static_cast<std::size_t>(k);
    p.padded_length = sorted[next - 1];
    out.push_back(std::move(p));
  }
  return out;
}

double modelled_cost(const std::vector<batch_plan>& plans, const batch_cost_model& model) {
  double total = 0;
  for (const auto& p : plans) total += model.cost(static_cast<int64_t>(p.rows.size()), p.padded_length);
  return total;
}

}  // namespace attnbench
