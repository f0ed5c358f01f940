// What every scenario asks of a variant's precision, in one place: the label its reports show,
// the tolerance its outputs are checked with, and the dtype whose matmul ceiling it is compared
// with. Registered techniques (techniques/registry.hpp) answer for the variants they own.
#pragma once

#include <string>

#include <torch/torch.h>

#include "config/config.hpp"
#include "report/result.hpp"

namespace attnbench {

// "fp32", "amp-bf16", "amp-fp16", or a registered technique's label ("bf16").
std::string precision_label(const variant_config& v);

// The relative-L2 bound the variant's outputs must meet against the baseline's.
double tolerance_for(const config& cfg, const variant_config& v);

// "fp32", "bf16" or "fp16": the dtype of the matmuls the variant runs.
std::string compute_dtype_name(const variant_config& v);
torch::Dtype compute_scalar_type(const variant_config& v);  // the same, as a LibTorch dtype
torch::Dtype scalar_type_of(const std::string& dtype_name);  // "bf16" → kBFloat16, "fp16" → kHalf, else kFloat

// The measured matmul ceiling of the variant's compute dtype (GFLOP/s), NaN when not measured.
double ceiling_for(const environment_info& env, const variant_config& v);

}  // namespace attnbench
