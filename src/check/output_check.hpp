// Compares a variant's outputs with the baseline's: the evidence behind "accuracy kept".
//
// Both are (N, D) float outputs in sample order, of one kind (output_kind, report/result.hpp).
// A variant PASSes only when
//   - it has no NaN/Inf,
//   - its relative L2 error ‖out − ref‖₂ / ‖ref‖₂ ≤ tolerance (its precision class's, one table:
//     common/precision_classes.hpp),
//   - embeddings: every sample's cosine similarity to the baseline's is at least
//     embedding_cosine_bound(tolerance),
//   - and every prediction the variant changed is excused by the float64 study (below).
// Predictions are what the model is used for:
//   - logits (N, num_labels): the top-1 class;
//   - embedding (N, hidden): the sample's nearest neighbour by cosine among the other N − 1
//     samples (semantic search over the run's samples); top-5 overlap is reported beside it.
// The rule for a changed prediction (issue 37 part 2) uses evidence that does not come from the
// variant's output: the baseline's model run in float64 (the reference) and K runs of it with
// weights and activations rounded at random at the variant's precision class
// (runner/decision_study.hpp). Sample i changed from a (the baseline's) to b (the variant's) is
// excused only when the reference's margin m = s(i, a) − s(i, b) is at most the largest shift of
// that margin over the K perturbed runs (s: the logit, or the cosine to candidate): the decision
// is within the noise its precision makes. Without a study every changed prediction FAILs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "report/result.hpp"

namespace attnbench {

// A per-sample relative error of this many tolerances is the most an embedding sample may have.
// The tolerance bounds the aggregate over all samples, and single samples spread above it (with
// equal norms, the aggregate is the root mean square of the per-sample errors): 4× leaves room
// for the worst of a run's samples, while a sample turned by more than asin(4·tolerance) fails
// however many correct samples dilute the aggregate.
inline constexpr double embedding_sample_error_factor = 4.0;

// The candidates top-k overlap counts (nearest neighbours or classes; fewer when there are fewer).
inline constexpr int64_t overlap_k = 5;

// The least cosine similarity a sample's embedding may have with the baseline's:
// cos(asin(min(1, 4·tolerance))) = √(1 − (4·tolerance)²), the smallest cosine a per-sample
// relative error ‖o − r‖/‖r‖ ≤ 4·tolerance allows (its angle θ has sin θ ≤ that error).
double embedding_cosine_bound(double tolerance);

// What the model described by `m` outputs, given the width D of its (N, D) outputs:
//   - model.mean_pool (a checkpoint without a classifier head): embedding;
//   - a TorchScript module returns logits or a hidden state (mean-pooled), or may pool itself
//     (a sentence-embedding export): logits when D == model.num_labels, else embedding;
//   - otherwise the built-in classifier: logits.
output_kind output_kind_of(const model_config& m, int64_t output_width);

// The float64 study of one precision class, over the same N samples in the same order.
struct decision_evidence {
  std::string precision_class;          // "bf16", "fp16", "fp32", "int8"
  torch::Tensor reference;              // (N, D) float64: the baseline's model in float64
  std::vector<torch::Tensor> perturbed;  // K × (N, D) float64: randomly rounded runs of it
  std::string unavailable;              // why there is no study (then no flip is excused)
};
// Computes the study on demand (only a run with a changed prediction pays for it); may be empty.
using evidence_source = std::function<std::shared_ptr<const decision_evidence>()>;

// Each sample's decision scores (N, C): the logits, or the cosine similarity to every other
// sample (the sample itself −∞). Float64.
torch::Tensor decision_scores(const torch::Tensor& out, output_kind kind);

check_result compare_outputs(const torch::Tensor& out, const torch::Tensor& ref, double tolerance,
                             output_kind kind, const evidence_source& evidence = {});

}  // namespace attnbench
