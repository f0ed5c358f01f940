// Analytic FLOP count of one forward pass, the yardstick for "achieved GFLOP/s".
//
// Counts the matrix multiplications only (2 FLOPs per multiply-add); embeddings, LayerNorm,
// softmax, GELU and the mask are O(S·H) and left out. For one sequence of padded length S with
// hidden H, attention width A = heads × head_dim (head_dim = H / heads, so A = H unless
// `pruned_heads` heads per layer were removed: techniques/head_pruning.cpp, then
// A = (heads − pruned_heads) × head_dim), feed-forward F, L layers and C labels:
//   per layer: QKV 2·S·H·3A + scores 2·S²·A + context 2·S²·A + out-proj 2·S·A·H + FFN 2·2·S·H·F
//   per sequence: pooler 2·H² + classifier 2·H·C
// Padding tokens are computed, so they count: this is the work the hardware did, not the useful
// work. Causal attention is counted in full too (the naive core computes the whole S×S matrix).
// A core that never computes padded keys is counted by forward_flops_real_keys instead.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "workload/cost_planner.hpp"

namespace attnbench {

double forward_flops(const model_config& m, int64_t batch, int64_t padded_length, int64_t pruned_heads = 0);

// The same for a batch whose attention skips padded keys (the custom kernels: per-sample key
// lengths): the linear layers still compute every padded token, Q·Kᵀ and P·V only each row's
// real keys, 2·S·L·A each for a row of L real tokens.
double forward_flops_real_keys(const model_config& m, const std::vector<int64_t>& key_lengths, int64_t padded_length,
                               int64_t pruned_heads = 0);

// The cost planner's model (workload/cost_planner.hpp) from forward_flops: per sequence
// forward_flops(m, 1, S) = head + linear·S + attention·S², read off exactly at S = 0, 1, 2, and
// scaled so that one token through the linear layers costs 1. `per_batch` is in those units.
batch_cost_model batch_cost_model_of(const model_config& m, double per_batch);

}  // namespace attnbench
