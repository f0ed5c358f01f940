// Pre-packed linear layers through oneDNN, as ONNX Runtime and TorchInductor's CPU freezing run
// them: each weight is reordered once into oneDNN's blocked layout for this CPU's GEMM
// (mkldnn::_reorder_linear_weight), and every call then skips the per-call packing an ATen linear
// pays (MKL sgemm packs B on each call), with bias and an optional exact (erf) GELU fused into the
// GEMM's epilogue (mkldnn::_linear_pointwise). fp32 weights run oneDNN's fp32 GEMM; bf16 weights
// its bf16 GEMM (AVX512_BF16 or AMX tiles, whichever this CPU has: oneDNN picks at run time). Both
// are LibTorch operators registered by its oneDNN build; they are called through the dispatcher
// since no C++ function is generated for them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model/linear_kind.hpp"

namespace attnbench {

// Why pre-packed linears cannot run in this LibTorch (its oneDNN operators are not registered),
// or nullopt when they can.
std::optional<std::string> packed_linear_unavailable();

// Why pre-packed linears in `dtype` ("fp32", "bf16") cannot run on a CPU with these features
// (common/cpu_info's list), or nullopt. bf16 needs avx512_bf16 or amx_bf16: oneDNN's bf16 GEMM
// runs on those (and refuses a CPU without avx512bw/vl/dq, which every avx512_bf16 CPU has); fp32
// runs anywhere. Any other dtype is not supported. Torch-free, so tests inject machines.
std::optional<std::string> packed_dtype_unavailable(const std::string& dtype,
                                                    const std::vector<std::string>& cpu_features);

// weight: (out, in) float32 or bfloat16 on the CPU → an opaque oneDNN tensor of that dtype for
// packed_linear.
torch::Tensor pack_linear_weight(const torch::Tensor& weight);

// x (..., in) → (..., out): x · Wᵀ + bias, then GELU (erf) when `gelu`, computed by oneDNN in the
// packed weight's dtype with fp32 accumulation and the epilogue (bias, GELU) in fp32 before one
// rounding. x of another dtype is cast to the weight's first, as autocast casts a linear's input
// (bf16 weights under autocast: the AMP path); the bias must already have the weight's dtype.
torch::Tensor packed_linear(const torch::Tensor& x, const torch::Tensor& packed_weight, const torch::Tensor& bias,
                            bool gelu);

// A linear's weight prepared for the path `kind` names: packed, pack_linear_weight of its weight;
// int8, its int8 weight for oneDNN's int8 matmul, which quantize_linear must have stored in it
// (model/int8_linear.hpp: an error otherwise); int8_weight, that int8 weight as it is; plain, nothing.
prepared_linear pack_linear(const torch::nn::Linear& linear, linear_kind kind);

// ATen's linear on `l`'s own weight. torch::nn::Linear's forward (nn/functional/linear.h) calls
// matmul(x, weight.t()) instead: under autocast the cast then meets a view of the weight, which
// autocast's weight cache skips, so amp re-cast every fp32 weight at every call (a decode step's
// whole time went to aten::copy_). at::linear hands autocast the leaf weight, whose cast is
// cached for the autocast region, as in Python, where nn.Linear calls F.linear.
torch::Tensor plain_linear(const torch::nn::Linear& l, const torch::Tensor& x);

// A linear site's forward by the path its prepared weight names (pack_linear): ATen's linear,
// packed_linear, int8_linear with the linear's quantized weight's scales, or int8_weight_linear
// (kernels/cpu/int8_gemv.hpp) on fp32 activations. The encoder's and decoder's linear sites call this.
torch::Tensor linear_forward(torch::nn::Linear linear, const prepared_linear& prepared,
                             const torch::Tensor& x, bool gelu = false);

}  // namespace attnbench
