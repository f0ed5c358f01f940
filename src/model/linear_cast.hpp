// The parameters autocast casts on every call, cast once instead (the AMP path in inference:
// techniques/plain_executor.hpp; pre-packed bf16 linears under AMP: techniques/packed_linear.cpp).
#pragma once

#include <torch/torch.h>

namespace attnbench {

// Casts, in place, the weight and bias of every torch::nn::Linear in `module` to `dtype`: exactly
// the parameters autocast casts on every call in inference (linear is on autocast's
// lower-precision list on the CPU and on CUDA; embeddings and LayerNorm are not, and stay as they
// are). Returns the bytes those parameters then hold. Inference only: a trained model needs its
// fp32 master weights.
int64_t cast_linear_layers(torch::nn::Module& module, torch::Dtype dtype);

}  // namespace attnbench
