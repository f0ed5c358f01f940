#include "workload/static_batching.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace attnbench {

batch pack_batch(const dataset& data, std::vector<int64_t> rows, int64_t padded_length, torch::Device device) {
  const auto b = static_cast<int64_t>(rows.size());
  const int64_t pad = special_tokens_for(INT64_MAX).pad;
  auto ids = torch::full({b, padded_length}, pad, torch::kLong);  // (B, S)
  auto mask = torch::zeros({b, padded_length}, torch::kBool);    // (B, S)
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<bool, 2>();
  int64_t real = 0;
  for (int64_t r = 0; r < b; ++r) {
    const auto& s = data.samples[static_cast<std::size_t>(rows[static_cast<std::size_t>(r)])];
    for (std::size_t t = 0; t < s.size(); ++t) {
      ids_a[r][static_cast<int64_t>(t)] = s[t];
      mask_a[r][static_cast<int64_t>(t)] = true;
    }
    real += static_cast<int64_t>(s.size());
  }
  return batch{ids.to(device), mask.to(device), std::move(rows), real, padded_length};
}

std::string static_batching::describe() const {
  return fmt::format("static bs={} pad={}", batch_size_, to_string(padding_));
}

std::vector<batch> static_batching::do_make_batches(const dataset& data, torch::Device device) const {
  std::vector<batch> out;
  const auto n = static_cast<int64_t>(data.samples.size());
  for (int64_t start = 0; start < n; start += batch_size_) {
    const int64_t end = std::min(n, start + batch_size_);
    std::vector<int64_t> rows;
    int64_t longest = 0;
    for (int64_t i = start; i < end; ++i) {
      rows.push_back(i);
      longest = std::max<int64_t>(longest, static_cast<int64_t>(data.samples[static_cast<std::size_t>(i)].size()));
    }
    out.push_back(pack_batch(data, std::move(rows), padding_ == padding_kind::max_length ? max_length_ : longest, device));
  }
  return out;
}

std::unique_ptr<batching_base> make_batching(const batching_config& cfg, int64_t max_length) {
  // Schema 1 knows only "static" (the parser enforces it); dynamic batching registers here.
  return std::make_unique<static_batching>(cfg.batch_size, cfg.padding, max_length);
}

}  // namespace attnbench
