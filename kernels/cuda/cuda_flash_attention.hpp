// cuda-flash2: attnbench's own FlashAttention-2-style CUDA forward (flash_attention.cu), behind
// LibTorch tensors. Built only when CMake finds nvcc and LibTorch's CUDA build
// (ATTNBENCH_WITH_CUDA_KERNELS); otherwise the registry entry says why it cannot run.
#pragma once

#include <torch/torch.h>

#include "model/attention_impls.hpp"

namespace attnbench {

// q, k, v: (B, H, S, D) fp16 or bf16 on one CUDA device, D ∈ {64, 128}, the last dimension
// contiguous; key_lengths undefined or (B) in [1, S]. Returns (B, H, S, D) laid out (B, S, H, D).
torch::Tensor cuda_flash_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   bool causal, const torch::Tensor& key_lengths = {});

// The registry entry "cuda-flash2" (model/attention_impls.hpp).
attention_impl cuda_flash_attention_impl();

// Whether this binary carries the kernel at all.
bool cuda_flash_attention_built();

}  // namespace attnbench
