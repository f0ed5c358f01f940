// The cost planner of dynamic batching: cuts the length-sorted rows into the consecutive batches
// that minimise a cost model of the pass, instead of filling each batch greedily. Pure index
// arithmetic, free of LibTorch: it takes lengths, constraints and the model's coefficients.
//
// Cost model of one batch of B rows padded to S, in token-equivalents (one token through the
// linear layers = 1; model/flops.hpp gives the coefficients from the model's FLOP count):
//   cost(B, S) = B·S + attention·B·S² + per_row·B + per_batch
// B·S is the linear layers (QKV, output projection, feed-forward) over padded tokens, B·S² the
// attention scores and context, per_row the pooler and classifier, per_batch what a batch costs
// besides its FLOPs (operator dispatch, small-GEMM inefficiency), fitted once per run
// (runner/planner_calibration.hpp) or a documented default.
//
// Over rows sorted by padded length a batch of rows i..j is padded to row j's length, so the best
// cut is a dynamic programme: best[j] = min over i of best[i-1] + cost(j-i+1, len[j]), subject to
// j-i+1 ≤ max_batch_size and (j-i+1)·len[j] ≤ max_tokens (and, bucketed, one bucket per batch).
// Exact, O(n · max_batch_size) time and O(n) memory.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "workload/batch_plan.hpp"

namespace attnbench {

struct batch_cost_model {
  double attention = 0;  // per padded token², relative to a token through the linear layers
  double per_row = 0;    // per sequence (pooler, classifier), in token-equivalents
  double per_batch = 0;  // per batch, in token-equivalents
  double cost(int64_t rows, int64_t padded_length) const;
};

// Sizes of consecutive batches over `sorted_lengths` (padded lengths, ascending) with the least
// total cost. A row that alone exceeds max_tokens gets a batch of its own, as greedy filling
// gives it. With `split_on_length_change` (bucketed grouping) no batch mixes lengths.
std::vector<int64_t> min_cost_batch_sizes(const std::vector<int64_t>& sorted_lengths, int64_t max_tokens,
                                          int64_t max_batch_size, bool split_on_length_change,
                                          const batch_cost_model& model);

// plan_dynamic's contract (batch_plan.hpp), with the least-cost cut instead of greedy filling.
std::vector<batch_plan> plan_min_cost(const std::vector<int64_t>& rows, const std::vector<int64_t>& lengths,
                                      const batching_config& cfg, const batch_cost_model& model);

// Total modelled cost of plans, in token-equivalents (for reports and tests).
double modelled_cost(const std::vector<batch_plan>& plans, const batch_cost_model& model);

}  // namespace attnbench
