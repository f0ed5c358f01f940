// Multi-head self-attention with a fused QKV projection and three interchangeable cores:
//   naive:  explicit Q·Kᵀ, additive mask, softmax, dropout, ·V — materialises the (S, S) scores;
//   sdpa:   at::scaled_dot_product_attention on the backend the caller selected;
//   custom: one of kernels/'s kernels (cpu-flash, cuda-flash2), given per-sample key lengths
//           instead of a mask, forward only.
// All read the same weights, so any variant can switch cores on the one shared model.
#pragma once

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/linear_kind.hpp"

namespace attnbench {

// How attention runs in a forward pass; set on the model per variant.
struct attention_settings {
  attention_kind kind = attention_kind::sdpa;
  sdpa_backend backend = sdpa_backend::auto_select;
  bool causal = false;
  std::string kernel;  // custom: the kernel's attention_impl name; "" = the device's default
};

// The per-batch mask, built once per forward and shared by every layer.
struct attention_mask {
  torch::Tensor keep;      // (B, 1, 1|S, S) bool: true where a query may attend to a key; undefined: no padding
  torch::Tensor additive;  // same shape, 0 where kept and -inf where masked (naive core only)
  bool causal = false;     // already folded into keep/additive when those are defined
  torch::Tensor key_lengths;  // (B) int64 real tokens per sample (custom core only); undefined: no padding
};

// Builds the mask from the (B, S) padding mask (nonzero = real token), adding the causal
// triangle when asked. An undefined padding mask means the batch has no padding. For the custom
// core only the key lengths are built, and the padding must be on the right (real tokens first,
// as every batch attnbench assembles is); anything else is an error naming the sample.
attention_mask make_attention_mask(const torch::Tensor& padding_mask, bool causal, attention_kind kind);

class SelfAttentionImpl : public torch::nn::Module {
 public:
  SelfAttentionImpl(int64_t hidden, int64_t heads, double dropout);

  // x: (B, S, H) → (B, S, H)
  torch::Tensor forward(const torch::Tensor& x, const attention_mask& mask, const attention_settings& how);

  // Attention-probability dropout (applies in training mode only).
  void set_dropout(double p);
  double dropout() const { return dropout_; }
  // Runs the QKV and output projections on the path `kind` names from now on, on weights prepared
  // once (model/packed_linear.hpp): inference only, the weights must not change afterwards.
  void pack_linears(linear_kind kind);

 private:
  torch::Tensor naive_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const attention_mask& mask);
  torch::Tensor sdpa_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                          const attention_mask& mask, const attention_settings& how);
  torch::Tensor custom_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            const attention_mask& mask, const attention_settings& how);

  int64_t hidden_;
  int64_t heads_;
  int64_t head_dim_;
  double dropout_;
  torch::nn::Linear qkv_{nullptr};
  torch::nn::Linear out_proj_{nullptr};
  prepared_linear qkv_packed_;  // plain until pack_linears()
  prepared_linear out_packed_;
  torch::nn::Dropout attn_dropout_{nullptr};
};
TORCH_MODULE(SelfAttention);

// Which SDPA backend LibTorch would pick for these inputs under the current flags
// ("flash", "efficient", "math", "cudnn", ...). Used to report what actually ran.
std::string sdpa_backend_choice(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const attention_mask& mask);

}  // namespace attnbench
