// Batch plans: which samples go together and how far they are padded. Pure index arithmetic,
// free of LibTorch, shared by the offline batching policies and the server scenario's batcher.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.hpp"

namespace attnbench {

struct batch_plan {
  std::vector<int64_t> rows;  // dataset indices, in the order they fill the batch
  int64_t padded_length = 0;  // S: every row is padded to this
  int64_t padded_tokens() const { return static_cast<int64_t>(rows.size()) * padded_length; }
};

// Consecutive rows, `batch_size` at a time, padded to `max_length` or to the batch's longest.
std::vector<batch_plan> plan_static(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                    int64_t batch_size, padding_kind padding, int64_t max_length);

// Rows grouped by length: sorted (pad to the batch's longest) or bucketed (pad to the bucket's
// bound), and cut greedily: each batch filled until the next row would break a limit, whatever
// cfg.planner says (plan_min_cost in cost_planner.hpp is the other cut). Each batch holds at
// most max_batch_size rows and max_tokens padded tokens; a row that alone exceeds max_tokens
// still gets a batch of its own (config checks refuse such workloads).
// `lengths` is indexed by row (dataset index).
std::vector<batch_plan> plan_dynamic(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                     const batching_config& cfg);

// The length a row is padded to under `cfg` at least: its own length (sorted, static longest),
// its bucket's bound (bucketed), or max_length (static max_length).
int64_t padded_length_of(int64_t length, const batching_config& cfg, int64_t max_length);

// Either policy, by cfg.kind.
std::vector<batch_plan> plan_batches(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                     const batching_config& cfg, int64_t max_length);

}  // namespace attnbench
