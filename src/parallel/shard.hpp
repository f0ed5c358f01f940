// Splitting a pass among data-parallel workers so that they finish together.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "workload/batch_plan.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

// Items (by index) dealt to `workers` so that their costs add up about evenly: the costliest
// first, each to the worker with the least cost so far (ties: the lower worker), which keeps
// every worker within one item's cost of the others. Each worker lists its items in index order.
std::vector<std::vector<std::size_t>> assign_by_cost(const std::vector<double>& cost, int64_t workers);

// One worker's share of a pass.
struct shard {
  std::vector<batch_plan> plans;  // in the pass's order
  int64_t samples = 0;
  int64_t real_tokens = 0;
  double flops = 0;               // forward FLOPs of its batches, padding included
};

// The pass's batches (planned once over the whole workload with the variant's batching, so
// length grouping sees every sample) dealt out by their forward FLOPs: the tokens each batch
// computes, padding included, plus attention's quadratic term. Deterministic: every rank of a
// multi-process run computes the same shards without talking to the others.
std::vector<shard> shard_batches(const dataset& data, const std::vector<batch_plan>& plans, const model_config& model,
                                 int64_t workers);

// How unevenly the workers finished: per pass the slowest worker's time over the mean, the median
// over passes (1 when the shards finish together). per_worker[w][k]: worker w's busy time in
// pass k, every worker with the same passes. NaN without passes.
double median_imbalance(const std::vector<std::vector<double>>& per_worker);

}  // namespace attnbench
