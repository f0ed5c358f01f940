// The float64 study behind the accuracy check's rule (check/output_check.hpp, issue 37 part 2).
//
// For one precision class it runs the baseline's model (the shared host model, naive attention)
// over the run's samples:
//   - once in float64: the reference;
//   - K times in float64 with its weights and activations rounded at random at the class's unit
//     roundoff (model/random_rounding.hpp), each run its own seeded stream.
// Nothing of a variant enters it, so a variant's own error can never excuse its changes. Samples
// run alone (batch 1, no padding), so the outputs depend on nothing but the sample.
//
// Its cost is (K + 1) float64 passes over the samples; the scenario runs it only when a variant of
// the class changed a prediction (check.study "on-change", the default) or when asked for every
// class (check.study "always").
#pragma once

#include <memory>
#include <string>

#include "check/output_check.hpp"
#include "model/encoder.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

// The number of randomly rounded runs (K ≥ 8: issue 37) and their seed stream.
inline constexpr int64_t study_runs = 8;
inline constexpr uint64_t study_seed = 0x37a11ce5ULL;

// The study of `precision_class` ("fp32", "bf16", "fp16", "int8") for `model` over `data`.
// Returns the reference and the K perturbed outputs, (N, D) float64 in sample order.
std::shared_ptr<decision_evidence> run_decision_study(const EncoderClassifier& model, const dataset& data,
                                                      const std::string& precision_class,
                                                      int64_t runs = study_runs);

// The largest relative L2 error of a perturbed run against the reference: the class's noise on
// this model and these samples (how common/precision_classes.hpp's tolerances were derived).
double study_noise_rel_l2(const decision_evidence& ev);

// The largest relative L2 error against ev.reference of the model itself run in fp32, once with
// the naive core and once with SDPA (samples alone, as the study runs them). The emulation
// accumulates in float64, so it leaves out the error of fp32's own accumulation, which is what an
// fp32 reordering changes; this measures it (the fp32 class's tolerance takes the larger of the two).
double fp32_kernel_rel_l2(const EncoderClassifier& model, const dataset& data, const decision_evidence& ev);

}  // namespace attnbench
