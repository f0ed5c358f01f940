#include "model/flops.hpp"

namespace attnbench {

double forward_flops(const model_config& m, int64_t batch, int64_t padded_length) {
  const double s = static_cast<double>(padded_length);
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn);
  const double per_layer = 2 * s * h * 3 * h      // fused QKV projection
                           + 2 * s * s * h        // Q·Kᵀ over all heads
                           + 2 * s * s * h        // probabilities · V
                           + 2 * s * h * h        // output projection
                           + 2 * 2 * s * h * f;   // feed-forward in and out
  // Pooler and classifier; mean pooling (no head) is a sum, negligible next to the matmuls.
  const double head = m.mean_pool ? 0 : 2 * h * h + 2 * h * static_cast<double>(m.num_labels);
  return static_cast<double>(batch) * (static_cast<double>(m.layers) * per_layer + head);
}

}  // namespace attnbench
