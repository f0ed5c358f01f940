#include "model/attention_impls.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "config/config.hpp"
#include "core/sdpa_backend_guard.hpp"
#include "kernels/kernels.hpp"

namespace attnbench {
namespace {

// The boolean mask SDPA and naive take for `causal` and `key_lengths` together (true: attend),
// or undefined when neither applies.
torch::Tensor keep_mask(int64_t seq, bool causal, const torch::Tensor& key_lengths, torch::Device device) {
  torch::Tensor keep;
  if (key_lengths.defined()) keep = key_padding_mask(key_lengths, seq, device);  // (B, 1, 1, S)
  if (causal) {
    auto past = torch::ones({seq, seq}, torch::TensorOptions().dtype(torch::kBool).device(device)).tril();  // (S, S)
    keep = keep.defined() ? keep & past.view({1, 1, seq, seq}) : past;
  }
  return keep;
}

torch::Tensor naive(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                    const torch::Tensor& key_lengths) {
  auto scores =
      torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));  // (B, H, S, S)
  if (const auto keep = keep_mask(q.size(-2), causal, key_lengths, q.device()); keep.defined())
    scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  return torch::matmul(torch::softmax(scores, -1), v);  // (B, H, S, D)
}

attention_impl sdpa_impl(sdpa_backend backend, bool cuda_only) {
  attention_impl impl;
  impl.name = "sdpa-" + to_string(backend);
  impl.unavailable = [backend, cuda_only](torch::Device device) -> std::optional<std::string> {
    if (cuda_only && !device.is_cuda()) return "sdpa backend " + to_string(backend) + " runs on CUDA only";
    return std::nullopt;
  };
  impl.run = [backend](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                        const torch::Tensor& key_lengths) {
    const sdpa_backend_guard guard(backend, q.device());
    if (!key_lengths.defined())
      return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/std::nullopt, /*dropout_p=*/0.0, causal);
    // SDPA takes the causal triangle or a mask, not both: with padding the triangle joins the mask.
    return at::scaled_dot_product_attention(q, k, v, keep_mask(q.size(-2), causal, key_lengths, q.device()),
                                            /*dropout_p=*/0.0, /*is_causal=*/false);
  };
  impl.scratch_bytes = [](int64_t, int64_t, int64_t, int64_t) -> int64_t { return 0; };
  if (backend == sdpa_backend::math)  // the math backend is the naive computation: scores materialised
    impl.scratch_bytes = [](int64_t b, int64_t h, int64_t s, int64_t e) { return 2 * b * h * s * s * e; };
  return impl;
}

std::mutex registry_mutex;
std::vector<attention_impl>& registry() {
  static std::vector<attention_impl> impls;
  return impls;
}

}  // namespace

torch::Tensor key_padding_mask(const torch::Tensor& key_lengths, int64_t seq, torch::Device device) {
  const auto lengths = key_lengths.to(device, torch::kLong);                                   // (B)
  const auto keys = torch::arange(seq, torch::TensorOptions().dtype(torch::kLong).device(device));  // (S)
  return (keys.unsqueeze(0) < lengths.unsqueeze(1)).view({lengths.size(0), 1, 1, seq});      // (B, 1, 1, S)
}

torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                  bool causal, const torch::Tensor& key_lengths) {
  // One head and at most `rows` queries at a time: the float64 reference must not be what runs
  // out of memory (a (rows, S) block of scores is 8·rows·S bytes).
  constexpr int64_t rows = 1024;
  const auto flat = [](const torch::Tensor& t) {
    return t.to(torch::kCPU, torch::kDouble).reshape({-1, t.size(-2), t.size(-1)});  // (B·H, S, D)
  };
  const auto q64 = flat(q), k64 = flat(k), v64 = flat(v);
  const int64_t seq = q64.size(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q64.size(2)));
  const auto keys = torch::arange(seq, torch::kLong);  // (S)
  const int64_t heads = q.size(1);
  auto out = torch::empty_like(q64);
  for (int64_t i = 0; i < q64.size(0); ++i)
    for (int64_t r0 = 0; r0 < seq; r0 += rows) {
      const int64_t r1 = std::min(seq, r0 + rows);
      auto scores = torch::matmul(q64[i].slice(0, r0, r1), k64[i].transpose(0, 1)) * scale;  // (r, S)
      if (key_lengths.defined()) {
        const int64_t len = key_lengths[i / heads].item<int64_t>();
        scores.slice(1, len).fill_(-std::numeric_limits<double>::infinity());
      }
      if (causal) {
        const auto queries = torch::arange(r0, r1, torch::kLong).unsqueeze(1);  // (r, 1)
        scores.masked_fill_(keys.unsqueeze(0) > queries, -std::numeric_limits<double>::infinity());
      }
      out[i].slice(0, r0, r1).copy_(torch::matmul(torch::softmax(scores, -1), v64[i]));  // (r, D)
    }
  return out.view(q.sizes());  // (B, H, S, D)
}

std::vector<attention_impl> attention_impls() {
  std::vector<attention_impl> out;
  attention_impl n;
  n.name = "naive";
  n.unavailable = [](torch::Device) -> std::optional<std::string> { return std::nullopt; };
  n.run = naive;
  // Scores and probabilities, both (B, H, S, S), live at once.
  n.scratch_bytes = [](int64_t b, int64_t h, int64_t s, int64_t e) { return 2 * b * h * s * s * e; };
  out.push_back(n);
  out.push_back(sdpa_impl(sdpa_backend::math, false));
  out.push_back(sdpa_impl(sdpa_backend::flash, false));
  out.push_back(sdpa_impl(sdpa_backend::efficient, true));
  out.push_back(sdpa_impl(sdpa_backend::cudnn, true));
  for (auto& impl : kernel_attention_impls()) out.push_back(std::move(impl));
  const std::lock_guard<std::mutex> lock(registry_mutex);
  out.insert(out.end(), registry().begin(), registry().end());
  return out;
}

std::optional<attention_impl> find_attention_impl(const std::string& name) {
  for (auto& impl : attention_impls())
    if (impl.name == name) return std::move(impl);
  return std::nullopt;
}

void register_attention_impl(attention_impl impl) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  auto& r = registry();
  r.erase(std::remove_if(r.begin(), r.end(), [&](const attention_impl& x) { return x.name == impl.name; }),
          r.end());
  r.push_back(std::move(impl));
}

void unregister_attention_impl(const std::string& name) {
  const std::lock_guard<std::mutex> lock(registry_mutex);
  auto& r = registry();
  r.erase(std::remove_if(r.begin(), r.end(), [&](const attention_impl& x) { return x.name == name; }),
          r.end());
}

}  // namespace attnbench
