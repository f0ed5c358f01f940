#include "parallel/shard.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "model/flops.hpp"
#include "report/result.hpp"
#include "stats/summary.hpp"

namespace attnbench {

std::vector<std::vector<std::size_t>> assign_by_cost(const std::vector<double>& cost, int64_t workers) {
  if (workers < 1) throw std::invalid_argument("assign_by_cost: workers must be >= 1");
  std::vector<std::size_t> order(cost.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(workers));
  std::vector<double> load(static_cast<std::size_t>(workers), 0);
  for (auto i : order) {
    const auto lightest = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[lightest].push_back(i);
    load[lightest] += cost[i];
  }
  for (auto& w : out) std::sort(w.begin(), w.end());
  return out;
}

std::vector<shard> shard_batches(const dataset& data, const std::vector<batch_plan>& plans, const model_config& model,
                                 int64_t workers) {
  std::vector<double> cost;
  for (const auto& p : plans) cost.push_back(forward_flops(model, static_cast<int64_t>(p.rows.size()), p.padded_length));
  std::vector<shard> out;
  for (const auto& items : assign_by_cost(cost, workers)) {
    shard s;
    for (auto i : items) {
      const batch_plan& p = plans[i];
      s.plans.push_back(p);
      s.samples += static_cast<int64_t>(p.rows.size());
      for (auto r : p.rows) s.real_tokens += static_cast<int64_t>(data.samples[static_cast<std::size_t>(r)].size());
      s.flops += cost[i];
    }
    out.push_back(std::move(s));
  }
  return out;
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

}  // namespace attnbench
