// How an encoder linear site runs, as the technique that prepared the model says it (not as its
// weights' dtype suggests): ATen's linear, oneDNN on a pre-packed float weight, or oneDNN's int8
// matmul on a quantized weight (model/packed_linear.hpp, model/int8_linear.hpp).
#pragma once

#include <torch/torch.h>

namespace attnbench {

enum class linear_kind { plain, packed, int8 };

// A linear site's prepared weight: `kind` says which path runs it; `weight` is the packed tensor
// for packed and int8 (undefined for plain).
struct prepared_linear {
  linear_kind kind = linear_kind::plain;
  torch::Tensor weight;
};

}  // namespace attnbench
