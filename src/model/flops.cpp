#include "model/flops.hpp"

namespace attnbench {

namespace {

// Attention's width: heads × head_dim (hidden / heads each), less the pruned heads.
double attention_width(const model_config& m, int64_t pruned_heads) {
  return m.heads > 0 ? static_cast<double>(m.heads - pruned_heads) * static_cast<double>(m.hidden / m.heads)
                     : static_cast<double>(m.hidden);
}

}  // namespace

double forward_flops(const model_config& m, int64_t batch, int64_t padded_length, int64_t pruned_heads) {
  const double s = static_cast<double>(padded_length);
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn);
  const double a = attention_width(m, pruned_heads);  // heads × head_dim: hidden unless heads were pruned
  const double per_layer = 2 * s * h * 3 * a      // fused QKV projection
                           + 2 * s * s * a        // Q·Kᵀ over all heads
                           + 2 * s * s * a        // probabilities · V
                           + 2 * s * a * h        // output projection
                           + 2 * 2 * s * h * f;   // feed-forward in and out
  // Pooler and classifier; mean pooling (no head) is a sum, negligible next to the matmuls.
  const double head = m.mean_pool ? 0 : 2 * h * h + 2 * h * static_cast<double>(m.num_labels);
  return static_cast<double>(batch) * (static_cast<double>(m.layers) * per_layer + head);
}

double forward_flops_real_keys(const model_config& m, const std::vector<int64_t>& key_lengths, int64_t padded_length,
                               int64_t pruned_heads) {
  const double s = static_cast<double>(padded_length);
  const double a = attention_width(m, pruned_heads);
  // Everything but the attention core, for every row: forward_flops minus its 4·S²·A per layer.
  const double rows = static_cast<double>(key_lengths.size());
  double flops = forward_flops(m, static_cast<int64_t>(key_lengths.size()), padded_length, pruned_heads) -
                 rows * static_cast<double>(m.layers) * 4 * s * s * a;
  for (int64_t l : key_lengths) flops += static_cast<double>(m.layers) * 4 * s * static_cast<double>(l) * a;
  return flops;
}

batch_cost_model batch_cost_model_of(const model_config& m, double per_batch) {
  // Per sequence, forward_flops is head + linear·S + attention·S²: three points fix it exactly.
  const double f0 = forward_flops(m, 1, 0);
  const double f1 = forward_flops(m, 1, 1) - f0;  // linear + attention
  const double f2 = forward_flops(m, 1, 2) - f0;  // 2·linear + 4·attention
  const double attention = (f2 - 2 * f1) / 2;
  const double linear = f1 - attention;
  batch_cost_model out;
  out.attention = attention / linear;
  out.per_row = f0 / linear;
  out.per_batch = per_batch;
  return out;
}

}  // namespace attnbench
