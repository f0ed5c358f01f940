// The attention implementations `attnbench attention` compares, alone, outside the model:
//   naive           explicit softmax(Q·Kᵀ/√d)·V, materialising the (B, H, S, S) scores;
//   sdpa-<backend>  at::scaled_dot_product_attention restricted to one backend (math, flash;
//                   efficient and cudnn on CUDA);
//   the kernels of kernels/ (kernels/kernels.cpp lists them: cpu-flash, cuda-flash2);
//   anything registered with register_attention_impl() (a test's planted implementation).
// Every implementation takes q, k, v of shape (B, H, S, D) in one dtype, and optionally per-sample
// key lengths (B): keys at or after key_lengths[b] are padding, masked out. It returns
// (B, H, S, D). reference_attention() is the float64 ground truth each one is validated against.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "kernels/attention_impl.hpp"

namespace attnbench {


// (B) key lengths → the (B, 1, 1, S) boolean mask of real keys (true: attend).
torch::Tensor key_padding_mask(const torch::Tensor& key_lengths, int64_t seq, torch::Device device);

// softmax(q·kᵀ/√d [+ causal mask] [+ key padding])·v computed in float64 on the CPU.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                  bool causal, const torch::Tensor& key_lengths = {});

// The implementation named `name` (built-in, kernel or registered), or nullopt.
std::optional<attention_impl> find_attention_impl(const std::string& name);

// naive and the SDPA backends, the kernels of kernels/, then every registered implementation.
std::vector<attention_impl> attention_impls();

// Adds an implementation (a custom kernel, or a test's planted one) to attention_impls().
void register_attention_impl(attention_impl impl);
// Removes one registered by name (tests clean up after themselves).
void unregister_attention_impl(const std::string& name);

}  // namespace attnbench
