#include "model/attention_impls.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "config/config.hpp"
#include "core/sdpa_backend_guard.hpp"

namespace attnbench {
namespace {

torch::Tensor naive(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal) {
  auto scores =
      torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));  // (B, H, S, S)
  if (causal) {
    const int64_t s = q.size(-2);
    auto future = torch::ones({s, s}, q.options().dtype(torch::kBool)).triu(1);  // (S, S)
    scores = scores.masked_fill(future, -std::numeric_limits<double>::infinity());
  }
  return torch::matmul(torch::softmax(scores, -1), v);  // (B, H, S, D)
}

attention_impl sdpa_impl(sdpa_backend backend, bool cuda_only) {
  attention_impl impl;
  impl.name = "sdpa-" + to_string(backend);
  impl.unavailable = [backend, cuda_only](torch::Device device) -> std::optional<std::string> {
    if (cuda_only && !device.is_cuda()) return "sdpa backend " + to_string(backend) + " runs on CUDA only";
    return std::nullopt;
  };
  impl.run = [backend](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal) {
    const sdpa_backend_guard guard(backend, q.device());
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/std::nullopt, /*dropout_p=*/0.0, causal);
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

torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                  bool causal) {
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
  auto out = torch::empty_like(q64);
  for (int64_t i = 0; i < q64.size(0); ++i)
    for (int64_t r0 = 0; r0 < seq; r0 += rows) {
      const int64_t r1 = std::min(seq, r0 + rows);
      auto scores = torch::matmul(q64[i].slice(0, r0, r1), k64[i].transpose(0, 1)) * scale;  // (r, S)
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
  const std::lock_guard<std::mutex> lock(registry_mutex);
  out.insert(out.end(), registry().begin(), registry().end());
  return out;
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
