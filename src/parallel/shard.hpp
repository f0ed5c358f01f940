// Splitting a workload among data-parallel workers so that they finish together.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/dataset.hpp"

namespace attnbench {

// Splits `rows` (dataset indices) into `workers` shards of about equal token counts: the longest
// sample first, each to the shard with the fewest tokens so far (ties: the lower shard), which
// keeps every shard within one sample's length of the others. Each shard lists its rows in
// dataset order, so a shard's batches look like the unsharded run's. Deterministic: every rank of
// a multi-process run computes the same split without talking to the others.
std::vector<std::vector<int64_t>> shard_by_tokens(const dataset& data, const std::vector<int64_t>& rows,
                                                  int64_t workers);

// How unevenly the workers finished: per pass the slowest worker's time over the mean, the median
// over passes (1 when the shards finish together). per_worker[w][k]: worker w's busy time in
// pass k, every worker with the same passes. NaN without passes.
double median_imbalance(const std::vector<std::vector<double>>& per_worker);

// Tokens in `rows`.
int64_t tokens_of(const dataset& data, const std::vector<int64_t>& rows);

}  // namespace attnbench
