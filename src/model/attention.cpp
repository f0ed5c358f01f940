#include "model/attention.hpp"

#include <ATen/SDPBackend.h>
#include <ATen/record_function.h>

#include <cmath>
#include <limits>

#include "core/sdpa_backend_guard.hpp"
#include "kernels/kernel_catalog.hpp"
#include "model/attention_impls.hpp"
#include "model/packed_linear.hpp"
#include "model/random_rounding.hpp"

namespace attnbench {

attention_mask make_attention_mask(const torch::Tensor& padding_mask, bool causal, attention_kind kind) {
  attention_mask mask;
  mask.causal = causal;
  if (!padding_mask.defined()) return mask;  // no padding: SDPA may use its mask-free kernels
  const int64_t seq = padding_mask.size(1);
  if (kind == attention_kind::custom) {
    // Key lengths, not a mask: the kernel never reads a padded key. That needs the real tokens
    // first in every sample.
    const auto real = padding_mask.ne(0);                                       // (B, S)
    mask.key_lengths = real.sum(1).to(torch::kLong);                            // (B)
    const auto prefix = torch::arange(seq, mask.key_lengths.options()).unsqueeze(0) <
                        mask.key_lengths.unsqueeze(1);                          // (B, S)
    // One read-back per forward, here, checks the lengths for every layer's kernel call (which
    // then trusts them and never syncs): right padding, and at least one real key per sample.
    const auto wrong = ((prefix != real).any(1) | mask.key_lengths.lt(1)).nonzero();
    TORCH_CHECK(wrong.numel() == 0,
                "custom attention takes right-padded batches (real tokens first, at least one); sample ",
                wrong.numel() ? wrong[0].item<int64_t>() : -1, " of the batch is not");
    return mask;
  }
  // (B, S) → (B, 1, 1, S): a query may look at every real key.
  torch::Tensor keep = padding_mask.to(torch::kBool).view({padding_mask.size(0), 1, 1, seq});
  if (causal) {
    auto tri = torch::ones({seq, seq}, padding_mask.options().dtype(torch::kBool)).tril();  // (S, S)
    keep = keep & tri.view({1, 1, seq, seq});                                                // (B, 1, S, S)
  }
  mask.keep = keep;
  if (kind == attention_kind::naive) {
    // -inf, not a large negative number: it stays exact in fp16/bf16 and softmax maps it to 0.
    // Every query keeps at least key 0 ([CLS]), so no row is all -inf.
    mask.additive = torch::zeros(keep.sizes(), padding_mask.options().dtype(torch::kFloat))
                        .masked_fill(keep.logical_not(), -std::numeric_limits<float>::infinity());
  }
  return mask;
}

SelfAttentionImpl::SelfAttentionImpl(int64_t hidden, int64_t heads, double dropout)
    : hidden_(hidden), heads_(heads), head_dim_(hidden / heads), dropout_(dropout) {
  TORCH_CHECK(hidden % heads == 0, "hidden (", hidden, ") must be a multiple of heads (", heads, ")");
  qkv_ = register_module("qkv", torch::nn::Linear(hidden, 3 * hidden));
  out_proj_ = register_module("out_proj", torch::nn::Linear(hidden, hidden));
  attn_dropout_ = register_module("attn_dropout", torch::nn::Dropout(dropout));
}

void SelfAttentionImpl::set_dropout(double p) {
  dropout_ = p;
  attn_dropout_->options.p(p);
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x, const attention_mask& mask,
                                         const attention_settings& how) {
  const int64_t batch = x.size(0);
  const int64_t seq = x.size(1);
  // The heads the projections hold: heads_, or fewer once pruned (model/head_pruning.hpp slices
  // the weights in place), when attention's width h·d is narrower than hidden.
  const int64_t heads = qkv_->weight.size(0) / (3 * head_dim_);
  torch::Tensor q, k, v;
  {
    RECORD_USER_SCOPE("attention.qkv_proj");
    auto qkv = linear_forward(qkv_, qkv_packed_, x)                // (B, S, 3·h·d)
                   .view({batch, seq, 3, heads, head_dim_})        // (B, S, 3, h, d)
                   .permute({2, 0, 3, 1, 4});                      // (3, B, h, S, d)
    q = qkv[0];
    k = qkv[1];
    v = qkv[2];
  }
  torch::Tensor context = how.kind == attention_kind::naive    ? naive_core(q, k, v, mask)
                          : how.kind == attention_kind::custom ? custom_core(q, k, v, mask, how)
                                                               : sdpa_core(q, k, v, mask, how);  // (B, h, S, d)
  RECORD_USER_SCOPE("attention.out_proj");
  context = context.transpose(1, 2).reshape({batch, seq, heads * head_dim_});  // (B, S, h·d); out_proj → (B, S, H)
  return linear_forward(out_proj_, out_packed_, context);
}

void SelfAttentionImpl::pack_linears(linear_kind kind) {
  qkv_packed_ = pack_linear(qkv_, kind);
  out_packed_ = pack_linear(out_proj_, kind);
}

torch::Tensor SelfAttentionImpl::naive_core(const torch::Tensor& q, const torch::Tensor& k,
                                            const torch::Tensor& v, const attention_mask& mask) {
  torch::Tensor scores;
  {
    RECORD_USER_SCOPE("attention.scores");
    scores = rounded_attention(torch::matmul(rounded_attention(q), rounded_attention(k).transpose(-2, -1)) /
                            std::sqrt(static_cast<double>(head_dim_)));  // (B, h, S, S)
  }
  {
    RECORD_USER_SCOPE("attention.mask");
    if (mask.additive.defined()) {
      scores = scores + mask.additive.to(scores.scalar_type());
    } else if (mask.causal) {
      const int64_t seq = scores.size(-1);
      auto future = torch::ones({seq, seq}, scores.options().dtype(torch::kBool)).triu(1);  // (S, S)
      scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    }
  }
  torch::Tensor probs;
  {
    RECORD_USER_SCOPE("attention.softmax");
    // Softmax in the scores' dtype, as a plain implementation does (on a CPU in LibTorch 2.11,
    // autocast leaves softmax on bf16 inputs in bf16).
    probs = torch::softmax(scores, -1);
  }
  {
    RECORD_USER_SCOPE("attention.dropout");
    probs = attn_dropout_(probs);
  }
  RECORD_USER_SCOPE("attention.context");
  return rounded_attention(torch::matmul(rounded_attention(probs), rounded_attention(v)));  // (B, h, S, d)
}

torch::Tensor SelfAttentionImpl::sdpa_core(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v, const attention_mask& mask,
                                           const attention_settings& how) {
  RECORD_USER_SCOPE("attention.sdpa");
  const sdpa_backend_guard backend(how.backend, q.device());
  const double p = is_training() ? dropout_ : 0.0;
  // Without padding the mask is left out (is_causal carries the triangle), which is what lets
  // flash attention run: it takes no arbitrary mask.
  const std::optional<torch::Tensor> keep = mask.keep.defined() ? std::optional<torch::Tensor>(mask.keep) : std::nullopt;
  const bool is_causal = mask.causal && !mask.keep.defined();
  try {
    return at::scaled_dot_product_attention(q, k, v, keep, p, is_causal);  // (B, h, S, d)
  } catch (const c10::Error& e) {
    if (how.backend == sdpa_backend::auto_select) throw;
    TORCH_CHECK(false, "sdpa backend \"", to_string(how.backend), "\" cannot run these inputs (q ", q.sizes(),
                " ", q.scalar_type(), " on ", q.device(), keep ? ", with a padding mask" : "",
                "); choose another backend or \"auto\". LibTorch said: ", e.what_without_backtrace());
  }
}

torch::Tensor SelfAttentionImpl::custom_core(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, const attention_mask& mask,
                                             const attention_settings& how) {
  RECORD_USER_SCOPE("attention.custom");
  TORCH_CHECK(!is_training() || dropout_ == 0.0, "custom attention has no dropout: it runs in inference only");
  const std::string name = how.kernel.empty() ? std::string(default_kernel(q.is_cuda())) : how.kernel;
  const auto impl = find_attention_impl(name);
  TORCH_CHECK(impl, "no attention kernel named \"", name, "\"");
  if (auto why = impl->unavailable(q.device())) TORCH_CHECK(false, *why);
  return impl->run(q, k, v, mask.causal, mask.key_lengths);  // (B, h, S, d)
}

std::string sdpa_backend_choice(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const attention_mask& mask) {
  const std::optional<torch::Tensor> keep = mask.keep.defined() ? std::optional<torch::Tensor>(mask.keep) : std::nullopt;
  const int64_t choice = at::_fused_sdp_choice(q, k, v, keep, 0.0, mask.causal && !mask.keep.defined());
  switch (static_cast<at::SDPBackend>(choice)) {
    case at::SDPBackend::math: return "math";
    case at::SDPBackend::flash_attention: return "flash";
    case at::SDPBackend::efficient_attention: return "efficient";
    case at::SDPBackend::cudnn_attention: return "cudnn";
    case at::SDPBackend::overrideable: return "overrideable";
    default: return "none";
  }
}

}  // namespace attnbench
