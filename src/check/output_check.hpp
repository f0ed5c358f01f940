// Compares a variant's outputs with the baseline's: the evidence behind "accuracy kept".
//
// Both are (N, D) float outputs in sample order, of one kind (output_kind, report/result.hpp).
// Every kind PASSes only when
//   - the variant has no NaN/Inf,
//   - and its relative L2 error ‖out − ref‖₂ / ‖ref‖₂ ≤ tolerance (per precision, from the config).
// Then, per kind:
//   - logits (N, num_labels): its top-1 prediction agrees with the baseline's on every decisive
//     sample. A sample is a coin toss, its flip excused, only when its baseline top-2 margin is
//     at most twice its own measured logit error e = max_j |out_j − ref_j| and e is within
//     4 × tolerance × the baseline's RMS logit (4× the per-logit error the tolerance allows, the
//     per-sample room embeddings get too); every other sample is decisive. The report says how many predictions were kept, k of N, beside
//     the verdict, and how many flips the rule excused;
//   - embedding (N, hidden): every sample's cosine similarity to the baseline's is at least
//     embedding_cosine_bound(tolerance). The relative L2 error is an aggregate over all samples,
//     so one sample pointing elsewhere hides in it; an argmax over embedding dimensions means
//     nothing, so no top-1 figure is computed (NaN).
#pragma once

#include <torch/torch.h>

#include "config/config.hpp"
#include "report/result.hpp"

namespace attnbench {

// A per-sample relative error of this many tolerances is the most an embedding sample may have.
// The tolerance bounds the aggregate over all samples, and single samples spread above it (with
// equal norms, the aggregate is the root mean square of the per-sample errors): 4× leaves room
// for the worst of a run's samples, while a sample turned by more than asin(4·tolerance) —
// 11.5° at bf16's 5e-2 — fails however many correct samples dilute the aggregate.
inline constexpr double embedding_sample_error_factor = 4.0;

// The least cosine similarity a sample's embedding may have with the baseline's:
// cos(asin(min(1, 4·tolerance))) = √(1 − (4·tolerance)²), the smallest cosine a per-sample
// relative error ‖o − r‖/‖r‖ ≤ 4·tolerance allows (its angle θ has sin θ ≤ that error).
// ≈ 1 − 8·tolerance²: 1 − 8e-10 at fp32's 1e-5, 0.99920 at amp-fp16's 1e-2, 0.97980 at amp-bf16's 5e-2.
double embedding_cosine_bound(double tolerance);

// What the model described by `m` outputs, given the width D of its (N, D) outputs:
//   - model.mean_pool (a checkpoint without a classifier head): embedding;
//   - a TorchScript module returns logits or a hidden state (mean-pooled), or may pool itself
//     (a sentence-embedding export): logits when D == model.num_labels, else embedding;
//   - otherwise the built-in classifier: logits.
output_kind output_kind_of(const model_config& m, int64_t output_width);

check_result compare_outputs(const torch::Tensor& out, const torch::Tensor& ref, double tolerance,
                             output_kind kind);

}  // namespace attnbench
