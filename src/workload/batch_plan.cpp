#include "workload/batch_plan.hpp"

#include <algorithm>
#include <numeric>

namespace attnbench {

std::vector<batch_plan> plan_static(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                    int64_t batch_size, padding_kind padding, int64_t max_length) {
  std::vector<batch_plan> out;
  for (std::size_t start = 0; start < rows.size(); start += static_cast<std::size_t>(batch_size)) {
    batch_plan p;
    const std::size_t end = std::min(rows.size(), start + static_cast<std::size_t>(batch_size));
    p.rows.assign(rows.begin() + static_cast<std::ptrdiff_t>(start), rows.begin() + static_cast<std::ptrdiff_t>(end));
    for (auto r : p.rows) p.padded_length = std::max(p.padded_length, lengths[static_cast<std::size_t>(r)]);
    if (padding == padding_kind::max_length) p.padded_length = max_length;
    out.push_back(std::move(p));
  }
  return out;
}

int64_t padded_length_of(int64_t length, const batching_config& cfg, int64_t max_length) {
  if (cfg.kind != "dynamic") return cfg.padding == padding_kind::max_length ? max_length : length;
  if (cfg.grouping == grouping_kind::sorted) return length;
  const auto it = std::lower_bound(cfg.boundaries.begin(), cfg.boundaries.end(), length);
  return it == cfg.boundaries.end() ? length : *it;
}

std::vector<batch_plan> plan_dynamic(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                     const batching_config& cfg) {
  // Sort by padded length (stable: equal lengths keep their order), then fill greedily. Within
  // a sorted run the next row is never shorter, so the batch's padded length is the newest row's.
  std::vector<int64_t> order = rows;
  const auto padded = [&](int64_t row) {
    return padded_length_of(lengths[static_cast<std::size_t>(row)], cfg, /*max_length=*/0);
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return padded(a) < padded(b); });
  std::vector<batch_plan> out;
  batch_plan cur;
  for (int64_t row : order) {
    const int64_t len = padded(row);
    const auto count = static_cast<int64_t>(cur.rows.size());
    const int64_t needed = std::max(cur.padded_length, len) * (count + 1);
    // Buckets never mix: a bucket's batches all have its bound as their shape.
    const bool new_bucket = cfg.grouping == grouping_kind::bucketed && count > 0 && len != cur.padded_length;
    if (count > 0 && (new_bucket || count + 1 > cfg.max_batch_size || needed > cfg.max_tokens)) {
      out.push_back(std::move(cur));
      cur = batch_plan{};
    }
    cur.rows.push_back(row);
    cur.padded_length = std::max(cur.padded_length, len);
  }
  if (!cur.rows.empty()) out.push_back(std::move(cur));
  return out;
}

std::vector<batch_plan> plan_batches(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                     const batching_config& cfg, int64_t max_length) {
  if (cfg.kind == "dynamic") return plan_dynamic(rows, lengths, cfg);
  return plan_static(rows, lengths, cfg.batch_size, cfg.padding, max_length);
}

}  // namespace attnbench
