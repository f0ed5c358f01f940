// Compares a variant's outputs with the baseline's: the evidence behind "accuracy kept".
//
// Both are (N, C) float logits in sample order. A variant PASSes when
//   - it has no NaN/Inf,
//   - its relative L2 error ‖out − ref‖₂ / ‖ref‖₂ ≤ tolerance (per precision, from the config),
//   - and its top-1 prediction agrees with the baseline's on every decisive sample: one whose
//     baseline top-2 margin exceeds tolerance × max|ref| (a sample the baseline itself barely
//     decides may flip under rounding without anything being wrong).
#pragma once

#include <torch/torch.h>

#include "report/result.hpp"

namespace attnbench {

check_result compare_outputs(const torch::Tensor& out, const torch::Tensor& ref, double tolerance);

}  // namespace attnbench
