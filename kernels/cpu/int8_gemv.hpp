// Weight-only int8 linears: y = x · (q · scale)ᵀ + bias with q int8 (out, in), quantized once per
// output channel (model/int8_linear.hpp: quantize_weight), and x, y float32. Nothing about the
// activations is quantized: the weights are widened to fp32 in registers as they are read, so a
// decode step reads one byte per weight instead of four (llama.cpp's Q8_0 and torchao's
// int8_weight_only make the same trade; ATen's _weight_int8pack_mm is the same operation, and on
// fp32 activations it ran at 0.2 GB/s of weights on the Zen 4 this was written on, 25× slower than
// fp32's own linear: measured by hand, no file).
//
// Code paths: scalar, avx2, avx512 (int8_gemv_impl.hpp's loop in int8_gemv_{scalar,avx2,avx512}.cpp),
// chosen as cpu-flash's fp32 path is (kernels/cpu/flash_attention.hpp: cpu_flash_path, so
// ATTNBENCH_CPU_ISA caps both); parallel over output channels with at::parallel_for. Validated
// against the float64 product of the dequantized weight (tests/kernels/test_int8_gemv.cpp).
#pragma once

#include <optional>

#include <torch/torch.h>

#include "kernels/cpu/flash_problem.hpp"

namespace attnbench {

// x (..., in) float32 (another float dtype is widened first), q (out, in) int8, scale (out) and bias
// (out, or undefined) float32, all on the CPU → (..., out) float32. `isa`: the code path (default:
// cpu_flash_path(kFloat, in)'s choice).
torch::Tensor int8_weight_linear(const torch::Tensor& x, const torch::Tensor& q, const torch::Tensor& scale,
                                 const torch::Tensor& bias, std::optional<kernels::flash_isa> isa = std::nullopt);

// The code path int8_weight_linear takes for `in` inputs on this CPU (the fp32 cpu-flash choice).
kernels::flash_isa int8_weight_linear_path(int64_t in);

}  // namespace attnbench
