// How an encoder linear site runs, as the technique that prepared the model says it (not as its
// weights' dtype suggests): ATen's linear, oneDNN on a pre-packed float weight, oneDNN's int8
// matmul on a quantized weight (model/packed_linear.hpp, model/int8_linear.hpp), or the int8
// weight-only kernel on fp32 activations (kernels/cpu/int8_gemv.hpp).
#pragma once

#include <torch/torch.h>

namespace attnbench {

enum class linear_kind { plain, packed, int8, int8_weight };

// A linear site's prepared weight: `kind` says which path runs it; `weight` is the packed tensor
// for packed and int8, the plain int8 (out, in) weight for int8_weight (undefined for plain).
struct prepared_linear {
  linear_kind kind = linear_kind::plain;
  torch::Tensor weight;
};

}  // namespace attnbench
