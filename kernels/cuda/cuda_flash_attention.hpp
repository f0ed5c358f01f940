// cuda-flash2: attnbench's own FlashAttention-2-style CUDA forward (flash_attention.cu), behind
// LibTorch tensors. Built only when CMake finds nvcc and LibTorch's CUDA build
// (ATTNBENCH_WITH_CUDA_KERNELS); otherwise the registry entry says why it cannot run.
#pragma once

#include <optional>
#include <string>

#include <torch/torch.h>

#include "kernels/attention_impl.hpp"

namespace attnbench {

// q, k, v: (B, H, S, D) fp16 or bf16 on one CUDA device, D ∈ {64, 128}, the last dimension
// contiguous; key_lengths undefined or (B) in [1, S]. Returns (B, H, S, D) laid out (B, S, H, D).
// No call synchronises the device: key_lengths in host memory are checked on the host (an error
// names the sample) and copied without waiting; key_lengths already on the device are not read
// back (their maker checks them once: make_attention_mask) and the kernel clamps them to [1, S].
torch::Tensor cuda_flash_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   bool causal, const torch::Tensor& key_lengths = {});

// The registry entry "cuda-flash2" (kernels/attention_impl.hpp, listed by model/attention_impls.hpp).
attention_impl cuda_flash_attention_impl();

// Host-side checks, torch-free of the device (CPU tests run them): the first key length of
// `lengths` (contiguous int64 in host memory) outside [1, seq], as a message naming the sample.
std::optional<std::string> key_lengths_problem(const torch::Tensor& lengths, int64_t seq);
// What a failed launch reports: an error that was pending before the launch (non-empty `pending`)
// is named as earlier work's, not the kernel's; else the launch's own error.
std::string launch_failure_message(const std::string& pending, const std::string& launch);

// Whether this binary carries the kernel at all.
bool cuda_flash_attention_built();

}  // namespace attnbench
