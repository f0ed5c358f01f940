#include <catch2/catch.hpp>

#include <numeric>

#include "workload/batch_plan.hpp"

using namespace attnbench;

namespace {

batching_config dynamic_cfg(int64_t max_tokens, int64_t max_bs) {
  batching_config c;
  c.kind = "dynamic";
  c.max_tokens = max_tokens;
  c.max_batch_size = max_bs;
  return c;
}

std::vector<int64_t> all_rows(std::size_t n) {
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

}  // namespace

TEST_CASE("dynamic plans never exceed the token budget or the batch size", "[workload]") {
  const std::vector<int64_t> lengths{10, 50, 12, 48, 11, 100, 9, 47, 13, 49, 100, 8};
  const auto cfg = dynamic_cfg(120, 4);
  const auto plans = plan_dynamic(all_rows(lengths.size()), lengths, cfg);
  std::vector<int64_t> seen;
  for (const auto& p : plans) {
    CHECK(p.padded_tokens() <= 120);
    CHECK(p.rows.size() <= 4);
    int64_t longest = 0;
    for (auto r : p.rows) longest = std::max(longest, lengths[static_cast<std::size_t>(r)]);
    CHECK(p.padded_length == longest);
    seen.insert(seen.end(), p.rows.begin(), p.rows.end());
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == all_rows(lengths.size()));  // every row exactly once
  // Sorted grouping: the four short ones (8..11) share a batch; the two 100s cannot share one.
  CHECK(plans.front().rows == std::vector<int64_t>{11, 6, 0, 4});
  CHECK(plans.back().rows == std::vector<int64_t>{10});
}

TEST_CASE("padding efficiency on a known set", "[workload]") {
  // Two lengths, 10 and 30, four of each. Static batches of 4 in order, padded to max_length 32:
  // 80 + 160 real tokens of 8·32 computed. Dynamic sorted with room for 4: 10·4 + 30·4 = all real.
  const std::vector<int64_t> lengths{10, 30, 10, 30, 10, 30, 10, 30};
  const auto rows = all_rows(lengths.size());
  const auto efficiency = [&](const std::vector<batch_plan>& plans) {
    int64_t computed = 0;
    for (const auto& p : plans) computed += p.padded_tokens();
    return 160.0 / static_cast<double>(computed);
  };
  CHECK(efficiency(plan_static(rows, lengths, 4, padding_kind::max_length, 32)) == Approx(160.0 / 256));
  CHECK(efficiency(plan_static(rows, lengths, 4, padding_kind::longest, 32)) == Approx(160.0 / 240));
  CHECK(efficiency(plan_dynamic(rows, lengths, dynamic_cfg(120, 4))) == Approx(1.0));
}

TEST_CASE("bucketed plans pad to the bucket bound", "[workload]") {
  auto cfg = dynamic_cfg(256, 8);
  cfg.grouping = grouping_kind::bucketed;
  cfg.boundaries = {16, 64};
  const std::vector<int64_t> lengths{5, 60, 16, 17, 3};
  const auto plans = plan_dynamic(all_rows(lengths.size()), lengths, cfg);
  REQUIRE(plans.size() == 2);
  CHECK(plans[0].padded_length == 16);
  CHECK(plans[0].rows == std::vector<int64_t>{0, 2, 4});
  CHECK(plans[1].padded_length == 64);
  CHECK(plans[1].rows == std::vector<int64_t>{1, 3});
  CHECK(padded_length_of(17, cfg, 512) == 64);
}
