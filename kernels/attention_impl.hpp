// One attention implementation as the registry (model/attention_impls.hpp) lists it and
// `attnbench attention` times it: a name, why it cannot run on a device, the call itself, what it
// materialises and which code path it takes. Declared here, in the kernels' layer, so that a kernel
// registers itself without including the model above it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <torch/torch.h>

namespace attnbench {

struct attention_impl {
  std::string name;
  // Why this implementation cannot run on `device` at all (nullopt: it can). Shape-specific
  // refusals are thrown by `run` and reported per point.
  std::function<std::optional<std::string>(torch::Device device)> unavailable;
  // key_lengths: undefined (no padding) or (B) integers in [1, S].
  std::function<torch::Tensor(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              bool causal, const torch::Tensor& key_lengths)>
      run;
  // Bytes of the intermediates it materialises beyond inputs and output (for a memory cap):
  // naive's (B, H, S, S) scores and probabilities; 0 when unknown or O(S).
  std::function<int64_t(int64_t batch, int64_t heads, int64_t seq, int64_t element_size)> scratch_bytes;
  // Optional: which of its code paths runs for these inputs on `device` (a kernel that picks one
  // from the CPU's features says which, so a report can show it). Empty: one path only.
  std::function<std::string(torch::Device device, c10::ScalarType dtype, int64_t head_dim)> code_path;
};

}  // namespace attnbench
