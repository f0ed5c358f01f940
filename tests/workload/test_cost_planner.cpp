#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "workload/cost_planner.hpp"

using namespace attnbench;

namespace {

batching_config dynamic_cfg(int64_t max_tokens, int64_t max_bs, planner_kind planner = planner_kind::cost) {
  batching_config c;
  c.kind = "dynamic";
  c.max_tokens = max_tokens;
  c.max_batch_size = max_bs;
  c.planner = planner;
  return c;
}

std::vector<int64_t> all_rows(std::size_t n) {
  std::vector<int64_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

std::vector<int64_t> random_lengths(std::mt19937_64& rng, std::size_t n, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> len(lo, hi);
  std::vector<int64_t> out(n);
  for (auto& l : out) l = len(rng);
  return out;
}

// A batch the limits allow: one row always (as greedy filling gives a too-long row its own).
bool allowed(int64_t rows, int64_t padded_length, const batching_config& cfg) {
  return rows == 1 || (rows <= cfg.max_batch_size && rows * padded_length <= cfg.max_tokens);
}

// The least modelled cost over every partition of the rows into sets (not only cuts of the
// sorted order), by enumerating restricted growth strings: Bell(n) partitions.
double brute_force_min_cost(const std::vector<int64_t>& lengths, const batching_config& cfg,
                            const batch_cost_model& model) {
  const std::size_t n = lengths.size();
  std::vector<std::size_t> block(n, 0);
  double best = std::numeric_limits<double>::infinity();
  std::function<void(std::size_t, std::size_t)> visit = [&](std::size_t i, std::size_t blocks) {
    if (i == n) {
      double total = 0;
      for (std::size_t b = 0; b < blocks; ++b) {
        int64_t rows = 0, longest = 0;
        for (std::size_t r = 0; r < n; ++r)
          if (block[r] == b) {
            ++rows;
            longest = std::max(longest, lengths[r]);
          }
        if (!allowed(rows, longest, cfg)) return;
        total += model.cost(rows, longest);
      }
      best = std::min(best, total);
      return;
    }
    for (std::size_t b = 0; b <= blocks; ++b) {
      block[i] = b;
      visit(i + 1, std::max(blocks, b + 1));
    }
  };
  visit(0, 0);
  return best;
}

void check_limits(const std::vector<batch_plan>& plans, const std::vector<int64_t>& lengths,
                  const batching_config& cfg) {
  std::vector<int64_t> seen;
  for (const auto& p : plans) {
    REQUIRE_FALSE(p.rows.empty());
    CHECK(allowed(static_cast<int64_t>(p.rows.size()), p.padded_length, cfg));
    int64_t longest = 0;
    for (auto r : p.rows) longest = std::max(longest, lengths[static_cast<std::size_t>(r)]);
    CHECK(p.padded_length == longest);
    seen.insert(seen.end(), p.rows.begin(), p.rows.end());
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == all_rows(lengths.size()));  // every row exactly once
}

}  // namespace

TEST_CASE("the cost planner finds the least-cost partition, as brute force over every partition does",
          "[workload]") {
  const batch_cost_model model{/*attention=*/1.0 / 64, /*per_row=*/3, /*per_batch=*/40};
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    const std::size_t n = 4 + seed % 5;  // 4..8 rows: Bell(8) = 4140 partitions
    const auto lengths = random_lengths(rng, n, 2, 64);
    const auto cfg = dynamic_cfg(/*max_tokens=*/64 + static_cast<int64_t>(seed) * 16,
                                 /*max_bs=*/2 + static_cast<int64_t>(seed % 3));
    INFO("seed " << seed);
    const auto plans = plan_min_cost(all_rows(n), lengths, cfg, model);
    check_limits(plans, lengths, cfg);
    CHECK(modelled_cost(plans, model) == Approx(brute_force_min_cost(lengths, cfg, model)));
    // Greedy filling is one of the partitions it chose among.
    CHECK(modelled_cost(plans, model) <=
          modelled_cost(plan_dynamic(all_rows(n), lengths, cfg), model) + 1e-9);
  }
}

TEST_CASE("cost planner plans respect the token budget and the batch size", "[workload]") {
  const batch_cost_model model{1.0 / 1536, 0.5, 64};
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    auto lengths = random_lengths(rng, 2000, 8, 512);
    lengths[7] = 600;  // alone over the budget: a batch of its own, as greedily
    const auto cfg = dynamic_cfg(/*max_tokens=*/512, /*max_bs=*/16);
    const auto plans = plan_min_cost(all_rows(lengths.size()), lengths, cfg, model);
    check_limits(plans, lengths, cfg);
    const auto it = std::find_if(plans.begin(), plans.end(), [](const batch_plan& p) {
      return std::count(p.rows.begin(), p.rows.end(), 7) > 0;
    });
    REQUIRE(it != plans.end());
    CHECK(it->rows.size() == 1);
    CHECK(it->padded_length == 600);
  }
}

TEST_CASE("with only the linear term the cost planner computes no padding", "[workload]") {
  // c = 0, attention = 0: the cost is the padded tokens, least when nothing is padded.
  const batch_cost_model tokens_only{0, 0, 0};
  std::mt19937_64 rng(3);
  const auto lengths = random_lengths(rng, 300, 4, 128);
  const auto cfg = dynamic_cfg(2048, 32);
  const auto plans = plan_min_cost(all_rows(lengths.size()), lengths, cfg, tokens_only);
  int64_t padded = 0;
  for (const auto& p : plans) padded += p.padded_tokens();
  CHECK(padded == std::accumulate(lengths.begin(), lengths.end(), int64_t{0}));
  int64_t greedy = 0;
  for (const auto& p : plan_dynamic(all_rows(lengths.size()), lengths, cfg)) greedy += p.padded_tokens();
  CHECK(padded <= greedy);
  // A tie goes to the bigger batch: equal lengths share batches instead of running alone.
  CHECK(plans.size() < lengths.size());
}

TEST_CASE("with a huge per-batch cost the cost planner makes as few batches as the limits allow",
          "[workload]") {
  // Feasibility is monotone (a part of an allowed batch is allowed), so greedy filling of the
  // sorted order makes the fewest batches: the planner must match its count.
  const batch_cost_model overhead_only{1.0 / 1536, 0, 1e12};
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    const auto lengths = random_lengths(rng, 500, 4, 256);
    const auto cfg = dynamic_cfg(1024, 24);
    const auto rows = all_rows(lengths.size());
    CHECK(plan_min_cost(rows, lengths, cfg, overhead_only).size() == plan_dynamic(rows, lengths, cfg).size());
  }
}

TEST_CASE("the cost planner cuts where greedy filling pads: a worked example", "[workload]") {
  // Sorted: 10 10 10 30 30 30, room for 4 rows. Greedy: [10 10 10 30] [30 30], 180 tokens computed
  // for 120 real. Cutting at the length change pads nothing, in the same two batches.
  const std::vector<int64_t> lengths{30, 10, 30, 10, 30, 10};
  const auto cfg = dynamic_cfg(1000, 4);
  const batch_cost_model model{0, 0, 100};
  const auto rows = all_rows(lengths.size());
  const auto greedy = plan_dynamic(rows, lengths, cfg);
  const auto cost = plan_min_cost(rows, lengths, cfg, model);
  REQUIRE(greedy.size() == 2);
  CHECK(greedy[0].padded_tokens() == 120);
  REQUIRE(cost.size() == 2);
  CHECK(cost[0].rows == std::vector<int64_t>{1, 3, 5});
  CHECK(cost[0].padded_length == 10);
  CHECK(cost[1].rows == std::vector<int64_t>{0, 2, 4});
  CHECK(modelled_cost(cost, model) == Approx(120 + 200));
  CHECK(modelled_cost(greedy, model) == Approx(180 + 200));
}

TEST_CASE("bucketed: the cost planner never mixes buckets", "[workload]") {
  auto cfg = dynamic_cfg(256, 8);
  cfg.grouping = grouping_kind::bucketed;
  cfg.boundaries = {16, 64};
  const std::vector<int64_t> lengths{5, 60, 16, 17, 3};
  const batch_cost_model model{0, 0, 1e9};  // even a huge overhead cannot merge buckets
  const auto plans = plan_min_cost(all_rows(lengths.size()), lengths, cfg, model);
  REQUIRE(plans.size() == 2);
  CHECK(plans[0].padded_length == 16);
  CHECK(plans[0].rows == std::vector<int64_t>{0, 2, 4});
  CHECK(plans[1].padded_length == 64);
  CHECK(plans[1].rows == std::vector<int64_t>{1, 3});
}

TEST_CASE("min_cost_batch_sizes on edge cases", "[workload]") {
  const batch_cost_model model{0, 0, 1};
  CHECK(min_cost_batch_sizes({}, 100, 4, false, model).empty());
  CHECK(min_cost_batch_sizes({50}, 10, 4, false, model) == std::vector<int64_t>{1});  // alone over the budget
  CHECK(min_cost_batch_sizes({5, 5, 5, 5, 5}, 100, 1, false, model) == std::vector<int64_t>(5, 1));
  CHECK(min_cost_batch_sizes({5, 5, 5, 5, 5}, 100, 4, false, model) == std::vector<int64_t>{1, 4});
}
