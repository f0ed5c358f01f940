// Pre-packed fp32 linear layers through oneDNN, as ONNX Runtime and TorchInductor's CPU freezing
// run them: each weight is reordered once into oneDNN's blocked layout for this CPU's GEMM
// (mkldnn::_reorder_linear_weight), and every call then skips the per-call packing an ATen linear
// pays (MKL sgemm packs B on each call), with bias and an optional exact (erf) GELU fused into the
// GEMM's epilogue (mkldnn::_linear_pointwise). Both are LibTorch operators registered by its oneDNN
// build; they are called through the dispatcher since no C++ function is generated for them.
#pragma once

#include <optional>
#include <string>

#include <torch/torch.h>

namespace attnbench {

// Why pre-packed linears cannot run in this LibTorch (its oneDNN operators are not registered),
// or nullopt when they can.
std::optional<std::string> packed_linear_unavailable();

// weight: (out, in) float32 on the CPU → an opaque oneDNN tensor for packed_linear.
torch::Tensor pack_linear_weight(const torch::Tensor& weight);

// x (..., in) float32 → (..., out): x · Wᵀ + bias, then GELU (erf) when `gelu`.
torch::Tensor packed_linear(const torch::Tensor& x, const torch::Tensor& packed_weight, const torch::Tensor& bias,
                            bool gelu);

// A torch::nn::Linear's forward, or its packed form once `packed` is set (pack_linear_weight of
// its weight): the encoder's linear sites call this, so a model with packed weights runs them.
torch::Tensor linear_forward(torch::nn::Linear linear, const torch::Tensor& packed, const torch::Tensor& x,
                             bool gelu = false);

}  // namespace attnbench
