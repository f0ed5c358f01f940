// The attention implementations `attnbench attention` compares, alone, outside the model:
//   naive           explicit softmax(Q·Kᵀ/√d)·V, materialising the (B, H, S, S) scores;
//   sdpa-<backend>  at::scaled_dot_product_attention restricted to one backend (math, flash;
//                   efficient and cudnn on CUDA);
//   anything registered with register_attention_impl(): a kernel from kernels/ registers itself
//   there (one call from its file's registration function), next to its CPU reference.
// Every implementation takes q, k, v of shape (B, H, S, D) in one dtype and returns (B, H, S, D).
// reference_attention() is the float64 ground truth each one is validated against.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace attnbench {

struct attention_impl {
  std::string name;
  // Why this implementation cannot run on `device` at all (nullopt: it can). Shape-specific
  // refusals are thrown by `run` and reported per point.
  std::function<std::optional<std::string>(torch::Device device)> unavailable;
  std::function<torch::Tensor(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              bool causal)>
      run;
  // Bytes of the intermediates it materialises beyond inputs and output (for a memory cap):
  // naive's (B, H, S, S) scores and probabilities; 0 when unknown or O(S).
  std::function<int64_t(int64_t batch, int64_t heads, int64_t seq, int64_t element_size)> scratch_bytes;
};

// softmax(q·kᵀ/√d [+ causal mask])·v computed in float64 on the CPU.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                  bool causal);

// naive and the SDPA backends, then every registered implementation.
std::vector<attention_impl> attention_impls();

// Adds an implementation (a custom kernel, or a test's planted one) to attention_impls().
void register_attention_impl(attention_impl impl);
// Removes one registered by name (tests clean up after themselves).
void unregister_attention_impl(const std::string& name);

}  // namespace attnbench
