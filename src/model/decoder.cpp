#include "model/decoder.hpp"

#include <ATen/record_function.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kernels/cpu/flash_attention.hpp"
#include "kernels/kernel_catalog.hpp"
#include "model/int8_linear.hpp"
#include "model/packed_linear.hpp"
#include "model/random_rounding.hpp"

namespace attnbench {
namespace {

constexpr double init_std = 0.02;  // GPT-2's (and BERT's) initialiser range

torch::nn::Linear make_linear(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// Hugging Face's rotate_half: (x1, x2) → (−x2, x1) over the last dimension's halves.
torch::Tensor rotate_half(const torch::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  // As LlamaRMSNorm: the statistics in float32 (float64 in the accuracy study's float64 copy), the
  // result back in the input's dtype, then scaled.
  const auto h = x.scalar_type() == torch::kDouble ? x : x.to(torch::kFloat);
  const auto normed = h * torch::rsqrt(h.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

using step_clock = std::chrono::steady_clock;
double ms_since(step_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(step_clock::now() - t0).count();
}

}  // namespace

decoder_dims decoder_dims_of(const model_config& m) {
  TORCH_CHECK(m.family != model_family::bert, "decoder_dims_of: model family bert is the encoder");
  decoder_dims d;
  d.family = m.family;
  d.layers = m.layers;
  d.hidden = m.hidden;
  d.heads = m.heads;
  d.kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  TORCH_CHECK(m.heads > 0 && m.hidden % m.heads == 0, "hidden (", m.hidden, ") must be a multiple of heads (",
              m.heads, ")");
  TORCH_CHECK(d.heads % d.kv_heads == 0, "heads (", d.heads, ") must be a multiple of kv_heads (", d.kv_heads, ")");
  d.head_dim = m.hidden / m.heads;
  d.ffn = m.ffn > 0 ? m.ffn : 4 * m.hidden;
  d.vocab = m.vocab_size;
  d.max_positions = m.max_positions;
  d.norm_eps = m.layer_norm_eps > 0 ? m.layer_norm_eps : (m.family == model_family::gpt2 ? 1e-5 : 1e-6);
  d.rope_theta = m.rope_theta > 0 ? m.rope_theta : 10000.0;
  d.tie_embeddings = m.family == model_family::gpt2;
  return d;
}

int64_t kv_cache::bytes() const {
  int64_t total = 0;
  for (const auto& t : keys) total += t.numel() * static_cast<int64_t>(t.element_size());
  for (const auto& t : values) total += t.numel() * static_cast<int64_t>(t.element_size());
  return total;
}

kv_cache make_kv_cache(const decoder_dims& d, int64_t batch, int64_t capacity, torch::ScalarType dtype,
                       torch::Device device) {
  kv_cache c;
  c.capacity = capacity;
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  for (int64_t i = 0; i < d.layers; ++i) {
    c.keys.push_back(torch::empty({batch, d.kv_heads, capacity, d.head_dim}, options));
    c.values.push_back(torch::empty({batch, d.kv_heads, capacity, d.head_dim}, options));
  }
  return c;
}

// --- one block ------------------------------------------------------------------------------

DecoderBlockImpl::DecoderBlockImpl(const decoder_dims& d) : d_(d) {
  const int64_t h = d.hidden, kv = d.kv_heads * d.head_dim;
  if (d.family == model_family::gpt2) {
    ln1_ = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({h}).eps(d.norm_eps)));
    qkv_ = register_module("c_attn", make_linear(h, 3 * h, true));
    out_ = register_module("c_proj", make_linear(h, h, true));
    ln2_ = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({h}).eps(d.norm_eps)));
    fc_ = register_module("c_fc", make_linear(h, d.ffn, true));
    proj_ = register_module("mlp_c_proj", make_linear(d.ffn, h, true));
  } else {
    rms1_ = register_parameter("input_layernorm", torch::ones({h}));
    q_ = register_module("q_proj", make_linear(h, d.heads * d.head_dim, false));
    k_ = register_module("k_proj", make_linear(h, kv, false));
    v_ = register_module("v_proj", make_linear(h, kv, false));
    out_ = register_module("o_proj", make_linear(d.heads * d.head_dim, h, false));
    rms2_ = register_parameter("post_attention_layernorm", torch::ones({h}));
    fc_ = register_module("gate_proj", make_linear(h, d.ffn, false));
    up_ = register_module("up_proj", make_linear(h, d.ffn, false));
    proj_ = register_module("down_proj", make_linear(d.ffn, h, false));
  }
}

std::vector<torch::nn::Linear> DecoderBlockImpl::linears() const {
  if (d_.family == model_family::gpt2) return {qkv_, out_, fc_, proj_};
  return {q_, k_, v_, out_, fc_, up_, proj_};
}

void DecoderBlockImpl::pack_linears(linear_kind kind) {
  packed_.clear();
  if (kind == linear_kind::plain) return;
  for (const auto& l : linears()) packed_.push_back(pack_linear(l, kind));
}

torch::Tensor DecoderBlockImpl::norm(int which, const torch::Tensor& x) {
  if (d_.family == model_family::gpt2) return which == 1 ? ln1_(x) : ln2_(x);
  return rms_norm(x, which == 1 ? rms1_ : rms2_, d_.norm_eps);
}

torch::Tensor DecoderBlockImpl::attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                       int64_t start, const attention_settings& how,
                                       const torch::Tensor& padded_keep) const {
  // q (B, h, T, hd) at positions [start, start + T); k, v (B, kvh, L, hd) with L = start + T.
  const int64_t t = q.size(2), l = k.size(2);
  torch::Tensor keep = padded_keep;  // (T, L) or (B, 1, T, L) bool, undefined where no mask is needed
  bool causal = false;
  if (!keep.defined() && t > 1) {
    if (start == 0) {
      causal = true;
    } else {
      const auto rows = torch::arange(start, start + t, torch::TensorOptions().dtype(torch::kLong).device(q.device()));
      const auto cols = torch::arange(l, rows.options());
      keep = cols.unsqueeze(0) <= rows.unsqueeze(1);
    }
  }
  const auto qq = q.to(k.scalar_type());
  if (how.kind == attention_kind::sdpa) {
    std::optional<torch::Tensor> mask;
    if (keep.defined()) mask = keep;
    return at::scaled_dot_product_attention(qq, k, v, mask, 0.0, causal, std::nullopt,
                                            /*enable_gqa=*/d_.kv_heads != d_.heads);
  }
  if (how.kind == attention_kind::custom) {
    // cpu-flash reads the cache in place: grouped-query heads without a copy, causal rows aligned
    // bottom-right (query i of T sees keys up to L − T + i), and a left-padded row's pad keys
    // skipped from its first real one, the column its last (always real) query row first keeps.
    const std::string name = how.kernel.empty() ? std::string(default_kernel(q.is_cuda())) : how.kernel;
    TORCH_CHECK(name == "cpu-flash" && q.device().is_cpu(), "decoder attention runs the custom kernel \"cpu-flash\" "
                "on the CPU only; \"", name, "\" on ", q.device(), " takes no KV cache yet");
    RECORD_FUNCTION("attnbench::cpu_flash_attention", std::vector<c10::IValue>());  // no ATen operator: named
    torch::Tensor begins;
    if (keep.defined() && keep.dim() == 4) begins = keep.select(1, 0).select(1, t - 1).to(torch::kInt).argmax(-1);
    return cpu_flash_attention_cached(qq, k, v, /*causal=*/true, begins);
  }
  TORCH_CHECK(how.kind == attention_kind::naive,
              "decoder attention runs \"naive\", \"sdpa\" or \"custom\" (cpu-flash)");
  // The accuracy study's hooks (model/random_rounding.hpp) on the core's operands and results, as
  // the encoder's naive core has them: identity outside its float64 runs.
  const int64_t groups = d_.heads / d_.kv_heads;
  const auto kk = rounded_attention(groups > 1 ? k.repeat_interleave(groups, 1) : k);
  const auto vv = rounded_attention(groups > 1 ? v.repeat_interleave(groups, 1) : v);
  auto scores = rounded_attention(torch::matmul(rounded_attention(qq), kk.transpose(-2, -1)) /
                                  std::sqrt(static_cast<double>(d_.head_dim)));
  if (causal) keep = torch::ones({t, l}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).tril();
  if (keep.defined()) scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  return rounded_attention(torch::matmul(rounded_attention(torch::softmax(scores, -1)), vv));
}

DecoderBlockImpl::projected DecoderBlockImpl::project(const torch::Tensor& x, const torch::Tensor& cos,
                                                      const torch::Tensor& sin) {
  const int64_t b = x.size(0), t = x.size(1), hd = d_.head_dim;
  const auto heads_first = [&](const torch::Tensor& y, int64_t n) { return y.view({b, t, n, hd}).transpose(1, 2); };
  const auto h = norm(1, x);
  projected p;
  if (d_.family == model_family::gpt2) {
    const auto qkv = lin(0, qkv_, h).split(d_.hidden, -1);
    p.q = heads_first(qkv[0], d_.heads);
    p.k = heads_first(qkv[1], d_.heads);
    p.v = heads_first(qkv[2], d_.heads);
  } else {
    p.q = heads_first(lin(0, q_, h), d_.heads);
    p.k = heads_first(lin(1, k_, h), d_.kv_heads);
    p.v = heads_first(lin(2, v_, h), d_.kv_heads);
    // cos, sin (T, hd) or (B, 1, T, hd) in float32, as Hugging Face computes them; cast to the
    // projections' dtype.
    const auto c = cos.to(p.q.scalar_type()), s = sin.to(p.q.scalar_type());
    p.q = p.q * c + rotate_half(p.q) * s;
    p.k = p.k * c + rotate_half(p.k) * s;
  }
  return p;
}

torch::Tensor DecoderBlockImpl::finish(const torch::Tensor& x, const torch::Tensor& attn) {
  const auto y = x + lin(d_.family == model_family::gpt2 ? 1 : 3, out_, attn).to(x.scalar_type());
  const auto h2 = norm(2, y);
  torch::Tensor mlp;
  if (d_.family == model_family::gpt2)
    mlp = lin(3, proj_, torch::gelu(lin(2, fc_, h2), "tanh"));
  else
    mlp = lin(6, proj_, torch::silu(lin(4, fc_, h2)) * lin(5, up_, h2));
  return y + mlp.to(y.scalar_type());
}

torch::Tensor DecoderBlockImpl::lin(std::size_t i, torch::nn::Linear l, const torch::Tensor& in) {
  // Plain linears carry the accuracy study's hooks as linear_forward's do (identity outside it).
  return packed_.empty() ? rounded_output(plain_linear(l, rounded_input(in))) : linear_forward(l, packed_[i], in);
}

torch::Tensor DecoderBlockImpl::forward(const torch::Tensor& x, torch::Tensor& k_cache, torch::Tensor& v_cache,
                                        int64_t start, const torch::Tensor& cos, const torch::Tensor& sin,
                                        const attention_settings& how, const torch::Tensor& keep) {
  const int64_t b = x.size(0), t = x.size(1);
  const projected p = project(x, cos, sin);
  k_cache.narrow(2, start, t).copy_(p.k);
  v_cache.narrow(2, start, t).copy_(p.v);
  const auto keys = k_cache.narrow(2, 0, start + t), values = v_cache.narrow(2, 0, start + t);
  const auto attn = attend(p.q, keys, values, start, how, keep).transpose(1, 2).reshape({b, t, d_.heads * d_.head_dim});
  return finish(x, attn);
}

torch::Tensor DecoderBlockImpl::forward_rows(const torch::Tensor& x, const std::vector<kv_cache*>& caches,
                                             std::size_t layer, const torch::Tensor& cos, const torch::Tensor& sin,
                                             const attention_settings& how) {
  const int64_t b = x.size(0);
  TORCH_CHECK(x.size(1) == 1 && static_cast<int64_t>(caches.size()) == b,
              "forward_rows: one new position per row, one cache per row");
  const projected p = project(x, cos, sin);
  std::vector<torch::Tensor> rows;
  rows.reserve(caches.size());
  for (int64_t r = 0; r < b; ++r) {
    kv_cache& c = *caches[static_cast<std::size_t>(r)];
    const int64_t start = c.length;
    auto& kc = c.keys[layer];
    auto& vc = c.values[layer];
    kc.narrow(2, start, 1).copy_(p.k.narrow(0, r, 1));
    vc.narrow(2, start, 1).copy_(p.v.narrow(0, r, 1));
    rows.push_back(attend(p.q.narrow(0, r, 1), kc.narrow(2, 0, start + 1), vc.narrow(2, 0, start + 1), start, how));
  }
  const auto attn = torch::cat(rows, 0).transpose(1, 2).reshape({b, 1, d_.heads * d_.head_dim});
  return finish(x, attn);
}

// --- the model ------------------------------------------------------------------------------

DecoderLMImpl::DecoderLMImpl(const model_config& cfg) : d_(decoder_dims_of(cfg)) {
  how_.kind = cfg.attention;
  how_.backend = cfg.backend;
  how_.causal = true;
  wte_ = register_module("wte", torch::nn::Embedding(d_.vocab, d_.hidden));
  blocks_ = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < d_.layers; ++i) blocks_->push_back(DecoderBlock(d_));
  if (d_.family == model_family::gpt2) {
    wpe_ = register_module("wpe", torch::nn::Embedding(d_.max_positions, d_.hidden));
    ln_f_ = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_.hidden}).eps(d_.norm_eps)));
  } else {
    norm_f_ = register_parameter("norm", torch::ones({d_.hidden}));
    lm_head_ = register_module("lm_head", make_linear(d_.hidden, d_.vocab, false));
  }
}

std::vector<torch::nn::Linear> DecoderLMImpl::block_linears() const {
  std::vector<torch::nn::Linear> out;
  for (std::size_t i = 0; i < blocks_->size(); ++i)
    for (auto& l : blocks_->ptr<DecoderBlockImpl>(i)->linears()) out.push_back(l);
  return out;
}

void DecoderLMImpl::pack_linears(linear_kind kind) {
  for (std::size_t i = 0; i < blocks_->size(); ++i) blocks_->ptr<DecoderBlockImpl>(i)->pack_linears(kind);
}

void DecoderLMImpl::init_weights(uint64_t seed) {
  torch::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& item : named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    const bool norm = name.find("ln_") != std::string::npos || name.find("layernorm") != std::string::npos ||
                      name == "norm";
    torch::Tensor values;
    if (norm && name.find(".bias") == std::string::npos)
      values = torch::ones(p.sizes());
    else if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0)
      values = torch::zeros(p.sizes());
    else
      values = at::normal(0.0, init_std, p.sizes(), gen);
    p.copy_(values);
  }
}

std::pair<torch::Tensor, torch::Tensor> DecoderLMImpl::rotary_tables(const torch::Tensor& positions) const {
  // Rotary frequencies in float32 whatever the model's dtype (a bf16 copy of them would move every
  // angle): θ^(−2i/hd), as LlamaRotaryEmbedding's default. positions (N) → cos, sin (N, hd).
  const auto exponents =
      torch::arange(0, d_.head_dim, 2, positions.options().dtype(torch::kFloat)) / static_cast<double>(d_.head_dim);
  const auto inv_freq = torch::pow(d_.rope_theta, exponents).reciprocal();
  const auto freqs = torch::outer(positions.to(torch::kFloat), inv_freq);  // (N, hd/2)
  const auto emb = torch::cat({freqs, freqs}, -1);                          // (N, hd)
  return {emb.cos(), emb.sin()};
}

torch::Tensor DecoderLMImpl::hidden_states(const torch::Tensor& ids, kv_cache& cache) {
  RECORD_FUNCTION("attnbench::decoder", std::vector<c10::IValue>());
  const int64_t t = ids.size(1), start = cache.length;
  TORCH_CHECK(start + t <= cache.capacity, "the KV cache holds ", cache.capacity, " positions; ", start + t,
              " asked for");
  TORCH_CHECK(static_cast<int64_t>(cache.keys.size()) == d_.layers, "the KV cache has ", cache.keys.size(),
              " layers; the model ", d_.layers);
  TORCH_CHECK(d_.max_positions <= 0 || start + t <= d_.max_positions, "position ", start + t - 1,
              " is past the model's max_positions (", d_.max_positions, ")");
  auto x = wte_(ids);
  torch::Tensor cos, sin, keep;
  const auto along = torch::TensorOptions().dtype(torch::kLong).device(ids.device());
  auto positions = torch::arange(start, start + t, along);  // (T), or (B, T) where rows are padded
  const bool padded = std::any_of(cache.pad.begin(), cache.pad.end(), [](int64_t p) { return p > 0; });
  if (padded) {
    const int64_t b = ids.size(0);
    TORCH_CHECK(static_cast<int64_t>(cache.pad.size()) == b, "the KV cache has padding for ", cache.pad.size(),
                " rows; the batch has ", b);
    const auto pad = torch::tensor(cache.pad, torch::kLong).to(ids.device()).view({b, 1, 1});
    const auto rows = positions.view({1, t, 1});
    const auto cols = torch::arange(start + t, along).view({1, 1, start + t});
    // A real query sees the real keys up to itself; a pad query (never read) only itself, so that
    // no softmax row is empty.
    keep = ((cols <= rows) & ((cols >= pad) | (cols == rows))).unsqueeze(1);  // (B, 1, T, L)
    positions = (positions.view({1, t}) - pad.view({b, 1})).clamp_min(0);      // (B, T)
  }
  if (d_.family == model_family::gpt2) {
    x = x + wpe_(positions);
  } else {
    std::tie(cos, sin) = rotary_tables(positions.flatten());
    if (padded) {
      cos = cos.view({ids.size(0), 1, t, d_.head_dim});
      sin = sin.view({ids.size(0), 1, t, d_.head_dim});
    }
  }
  for (std::size_t i = 0; i < blocks_->size(); ++i) {
    x = acquire(i).forward(x, cache.keys[i], cache.values[i], start, cos, sin, how_, keep);
    release(i);
  }
  cache.length = start + t;
  return d_.family == model_family::gpt2 ? ln_f_(x) : rms_norm(x, norm_f_, d_.norm_eps);
}

torch::Tensor DecoderLMImpl::logits_of(const torch::Tensor& h) {
  // The LM head stays in floating point in every variant (int8 quantizes the block linears only):
  // the study's hook rounds it at the class's float grid.
  const auto x = rounded_float(h);
  const auto logits = rounded_float(d_.family == model_family::gpt2 ? torch::linear(x, wte_->weight)
                                                                    : plain_linear(lm_head_, x));
  return logits.scalar_type() == torch::kDouble ? logits : logits.to(torch::kFloat);
}

torch::Tensor DecoderLMImpl::forward(const torch::Tensor& ids, kv_cache& cache) {
  return logits_of(hidden_states(ids, cache));
}

torch::Tensor DecoderLMImpl::forward_last(const torch::Tensor& ids, kv_cache& cache) {
  return logits_of(hidden_states(ids, cache).select(1, ids.size(1) - 1));
}

torch::Tensor DecoderLMImpl::step_rows(const torch::Tensor& ids, const std::vector<kv_cache*>& caches) {
  RECORD_FUNCTION("attnbench::decoder_step_rows", std::vector<c10::IValue>());
  const int64_t b = ids.size(0);
  TORCH_CHECK(ids.dim() == 2 && ids.size(1) == 1 && static_cast<int64_t>(caches.size()) == b,
              "step_rows: ids (B, 1) and one cache per row");
  std::vector<int64_t> at;
  for (const kv_cache* c : caches) {
    TORCH_CHECK(c->length + 1 <= c->capacity, "the KV cache holds ", c->capacity, " positions; ", c->length + 1,
                " asked for");
    TORCH_CHECK(d_.max_positions <= 0 || c->length + 1 <= d_.max_positions, "position ", c->length,
                " is past the model's max_positions (", d_.max_positions, ")");
    at.push_back(c->length);
  }
  const auto positions = torch::tensor(at, torch::TensorOptions().dtype(torch::kLong)).to(ids.device());
  auto x = wte_(ids);  // (B, 1, H)
  torch::Tensor cos, sin;
  if (d_.family == model_family::gpt2) {
    x = x + wpe_(positions).unsqueeze(1);
  } else {
    std::tie(cos, sin) = rotary_tables(positions);  // (B, hd): each row at its own position
    cos = cos.view({b, 1, 1, d_.head_dim});
    sin = sin.view({b, 1, 1, d_.head_dim});
  }
  for (std::size_t i = 0; i < blocks_->size(); ++i) {
    x = acquire(i).forward_rows(x, caches, i, cos, sin, how_);
    release(i);
  }
  for (kv_cache* c : caches) ++c->length;
  return logits_of((d_.family == model_family::gpt2 ? ln_f_(x) : rms_norm(x, norm_f_, d_.norm_eps)).select(1, 0));
}

DecoderLM copy_decoder(const DecoderLM& model, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  model_config m;
  const decoder_dims& d = model->dims();
  m.family = d.family;
  m.layers = d.layers;
  m.hidden = d.hidden;
  m.heads = d.heads;
  m.kv_heads = d.kv_heads;
  m.ffn = d.ffn;
  m.vocab_size = d.vocab;
  m.max_positions = d.max_positions;
  m.layer_norm_eps = d.norm_eps;
  m.rope_theta = d.rope_theta;
  DecoderLM copy(m);
  auto from = model->named_parameters(true);
  for (auto& item : copy->named_parameters(true)) item.value().copy_(from[item.key()]);
  copy->set_attention(model->attention());
  copy->to(dtype);
  copy->eval();
  return copy;
}

generation generate_greedy(DecoderLM& model, const torch::Tensor& prompt, int64_t new_tokens,
                           torch::ScalarType cache_dtype, const std::vector<int64_t>& pad) {
  TORCH_CHECK(new_tokens >= 1, "generate_greedy: at least one new token");
  const int64_t b = prompt.size(0), p = prompt.size(1);
  generation g;
  const auto t0 = step_clock::now();
  kv_cache cache = make_kv_cache(model->dims(), b, p + new_tokens, cache_dtype, prompt.device());
  cache.pad = pad;
  g.cache_bytes = cache.bytes();
  auto out = torch::empty({b, new_tokens}, prompt.options());
  auto next = model->forward_last(prompt, cache).argmax(-1);  // (B)
  out.select(1, 0).copy_(next);
  // The first token exists once its id is on the host side of the loop: argmax is synchronous on
  // the CPU; on a GPU the copy into `out` is ordered on the stream, so wait for it.
  if (prompt.is_cuda()) (void)out.select(1, 0).cpu();
  g.prefill_ms = ms_since(t0);
  g.step_ms.reserve(static_cast<std::size_t>(new_tokens - 1));
  for (int64_t s = 1; s < new_tokens; ++s) {
    const auto ts = step_clock::now();
    next = model->forward_last(next.unsqueeze(1), cache).argmax(-1);
    out.select(1, s).copy_(next);
    if (prompt.is_cuda()) (void)out.select(1, s).cpu();
    g.step_ms.push_back(ms_since(ts));
  }
  g.tokens = out;
  return g;
}

torch::Tensor teacher_forced_logits(DecoderLM& model, const torch::Tensor& prompt, const torch::Tensor& tokens,
                                    torch::ScalarType cache_dtype, const std::vector<int64_t>& pad) {
  const int64_t b = prompt.size(0), p = prompt.size(1), n = tokens.size(1);
  // The prompt and every generated token but the last: position P − 1 + s predicts token s (left
  // padding keeps every row's last prompt token at P − 1).
  const auto ids = torch::cat({prompt, tokens.narrow(1, 0, n - 1).to(prompt.device())}, 1);
  kv_cache cache = make_kv_cache(model->dims(), b, p + n - 1, cache_dtype, prompt.device());
  cache.pad = pad;
  return model->forward(ids, cache).narrow(1, p - 1, n);
}

double decode_bytes_per_step(const DecoderLM& model, int64_t batch, int64_t context, int64_t cache_element_bytes) {
  double bytes = 0;
  for (const auto& l : model->block_linears()) {
    const auto q = quantized_weight_of(*l);
    bytes += q ? static_cast<double>(q->weight.numel())
               : static_cast<double>(l->weight.numel() * static_cast<int64_t>(l->weight.element_size()));
  }
  const decoder_dims& d = model->dims();
  bytes += static_cast<double>(d.vocab * d.hidden) * static_cast<double>(c10::elementSize(model->dtype()));
  bytes += 2.0 * static_cast<double>(d.layers * batch * d.kv_heads * context * d.head_dim * cache_element_bytes);
  return bytes;
}

int64_t decoder_weight_bytes(const DecoderLM& model) {
  int64_t bytes = 0;
  for (const auto& p : model->parameters()) bytes += static_cast<int64_t>(p.nbytes());
  for (const auto& l : model->block_linears())
    if (const auto q = quantized_weight_of(*l))
      bytes += static_cast<int64_t>(q->weight.nbytes() + q->scale.nbytes()) - static_cast<int64_t>(l->weight.nbytes());
  return bytes;
}

double decoder_prefill_flops(const DecoderLM& model, int64_t batch, int64_t length) {
  const decoder_dims& d = model->dims();
  double per_token = 0;
  for (const auto& l : model->block_linears()) per_token += 2.0 * static_cast<double>(l->weight.numel());
  const double tokens = static_cast<double>(batch * length);
  const double pairs = static_cast<double>(batch) * static_cast<double>(length) * static_cast<double>(length + 1) / 2.0;
  return tokens * per_token + 4.0 * pairs * static_cast<double>(d.layers * d.heads * d.head_dim) +
         2.0 * static_cast<double>(batch * d.vocab * d.hidden);
}

}  // namespace attnbench
