// Decoder-only language models, in torch::nn, for the generate scenario (runner/generate_scenario.hpp):
//   gpt2:  token + learned position embeddings → N × pre-LayerNorm block (fused QKV attention,
//          tanh-GELU MLP) → LayerNorm → LM head tied to the token embedding;
//   llama: token embedding → N × pre-RMSNorm block (rotary embeddings on Q and K, grouped-query
//          attention, SwiGLU MLP, no biases) → RMSNorm → LM head.
// Both follow Hugging Face's GPT2LMHeadModel and LlamaForCausalLM, so their safetensors load
// (load_decoder_weights) and transformers generates the same greedy tokens from them
// (tests/model/test_decoder_reference.cpp).
//
// Generation runs against a KV cache preallocated for the whole sequence in the dtype activations
// flow in: forward() writes the new positions' keys and values into it and attends over every
// position filled so far, so a decode step reads the cache once and allocates nothing of its size.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/attention.hpp"
#include "model/linear_kind.hpp"

namespace attnbench {

// A decoder's dimensions, resolved from the model block (family gpt2 or llama).
struct decoder_dims {
  model_family family = model_family::gpt2;
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  int64_t max_positions = 0;  // learned positions (gpt2) or the longest sequence allowed (llama)
  double norm_eps = 0;
  double rope_theta = 0;      // llama
  bool tie_embeddings = true; // the LM head reads the token embedding (gpt2 always; llama when set)
};
decoder_dims decoder_dims_of(const model_config& m);

// Keys and values of every layer for `capacity` positions of `batch` sequences: each (B, kv_heads,
// capacity, head_dim), allocated once. `length` positions are filled.
struct kv_cache {
  std::vector<torch::Tensor> keys, values;
  int64_t length = 0;
  int64_t capacity = 0;
  // Left padding of a static batch of prompts of unequal lengths: row b's first pad[b] positions
  // hold pad tokens, which no position attends to, and its real tokens sit at positions 0, 1, …
  // (as Hugging Face's generate() with attention_mask). Empty: no padding.
  std::vector<int64_t> pad;
  int64_t bytes() const;
};
kv_cache make_kv_cache(const decoder_dims& d, int64_t batch, int64_t capacity, torch::ScalarType dtype,
                       torch::Device device);

class DecoderBlockImpl : public torch::nn::Module {
 public:
  explicit DecoderBlockImpl(const decoder_dims& d);
  // x (B, T, H) at positions [start, start + T); k_cache, v_cache this layer's (B, kvh, C, hd).
  // keep (B, 1, T, start + T) bool: which keys each query may attend to (left-padded batches);
  // undefined: causal over every position.
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor& k_cache, torch::Tensor& v_cache, int64_t start,
                        const torch::Tensor& cos, const torch::Tensor& sin, const attention_settings& how,
                        const torch::Tensor& keep = {});
  // One decode step of B sequences that each own a cache (caches[r], batch 1, its own length):
  // x (B, 1, H); the linears run over the B rows at once, attention row by row over each row's
  // filled positions; row r's key and value go to its cache at its length (which the caller
  // advances). cos, sin (B, 1, 1, hd) for llama.
  torch::Tensor forward_rows(const torch::Tensor& x, const std::vector<kv_cache*>& caches, std::size_t layer,
                             const torch::Tensor& cos, const torch::Tensor& sin, const attention_settings& how);
  void pack_linears(linear_kind kind);
  std::vector<torch::nn::Linear> linears() const;

 private:
  struct projected {
    torch::Tensor q, k, v;  // (B, heads, T, hd), (B, kv_heads, T, hd) ×2, rotary applied (llama)
  };
  projected project(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
  // The residual after attention, the MLP and its residual: x (B, T, H), attn (B, T, heads·hd).
  torch::Tensor finish(const torch::Tensor& x, const torch::Tensor& attn);
  torch::Tensor lin(std::size_t i, torch::nn::Linear l, const torch::Tensor& in);
  torch::Tensor norm(int which, const torch::Tensor& x);
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t start,
                       const attention_settings& how, const torch::Tensor& keep = {}) const;
  decoder_dims d_;
  // gpt2: qkv (fused, with bias), out; llama: q, k, v, out (no bias)
  torch::nn::Linear qkv_{nullptr}, q_{nullptr}, k_{nullptr}, v_{nullptr}, out_{nullptr};
  // gpt2: fc, proj; llama: gate, up, down
  torch::nn::Linear fc_{nullptr}, up_{nullptr}, proj_{nullptr};
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};  // gpt2
  torch::Tensor rms1_, rms2_;                         // llama: RMSNorm weights
  std::vector<prepared_linear> packed_;               // per linears() entry; empty: plain
};
TORCH_MODULE(DecoderBlock);

class DecoderLMImpl : public torch::nn::Module {
 public:
  explicit DecoderLMImpl(const model_config& cfg);
  // ids (B, T) int64 at positions [cache.length, cache.length + T): logits (B, T, vocab) in float32
  // (float64 for a float64 copy, the accuracy study's: copy_decoder);
  // their keys and values are written into the cache, whose length grows by T.
  torch::Tensor forward(const torch::Tensor& ids, kv_cache& cache);
  // Only the last position's logits (B, vocab): what a generation step needs (the LM head over
  // one position instead of T).
  torch::Tensor forward_last(const torch::Tensor& ids, kv_cache& cache);
  // One decode step for sequences that each own a cache (continuous batching,
  // runner/generate_engine.hpp): ids (B, 1), row r at position caches[r]->length. The linears
  // and the LM head run over the B rows at once; attention row by row against each row's own
  // cache, so rows of any lengths share a step without padding. Returns (B, vocab) float32
  // logits; every cache's length grows by 1.
  torch::Tensor step_rows(const torch::Tensor& ids, const std::vector<kv_cache*>& caches);
  // GPT-2's initialisation from `seed` (N(0, 0.02), biases 0, norms 1), on every family:
  // independent of the global RNG.
  void init_weights(uint64_t seed);
  // Every block linear on the path `kind` names (model/packed_linear.hpp); the LM head stays ATen's.
  void pack_linears(linear_kind kind);
  std::vector<torch::nn::Linear> block_linears() const;
  void set_attention(const attention_settings& how) { how_ = how; }
  const attention_settings& attention() const { return how_; }
  const decoder_dims& dims() const { return d_; }
  // The parameters' dtype (the KV cache's, where no autocast runs).
  torch::ScalarType dtype() const { return wte_->weight.scalar_type(); }
  // Block i of the model's own (the host weights an offloaded variant streams from).
  DecoderBlockImpl& block(std::size_t i) { return *blocks_->ptr<DecoderBlockImpl>(i); }

  // Where each block's weights come from in a forward (offloading, techniques/decoder_offload.hpp):
  // acquire(i) returns the block that computes layer i (a slot holding layer i's weights), and
  // release(i) follows its forward. Unset: the model's own blocks.
  struct block_source {
    std::function<DecoderBlockImpl&(std::size_t layer)> acquire;
    std::function<void(std::size_t layer)> release;
  };
  void set_block_source(block_source source) { source_ = std::move(source); }

 private:
  torch::Tensor hidden_states(const torch::Tensor& ids, kv_cache& cache);
  // The LM head over final hidden states: float32 logits (float64 for a float64 model).
  torch::Tensor logits_of(const torch::Tensor& h);
  DecoderBlockImpl& acquire(std::size_t i) { return source_.acquire ? source_.acquire(i) : block(i); }
  void release(std::size_t i) {
    if (source_.release) source_.release(i);
  }
  block_source source_;
  std::pair<torch::Tensor, torch::Tensor> rotary_tables(const torch::Tensor& positions) const;
  decoder_dims d_;
  attention_settings how_;
  torch::nn::Embedding wte_{nullptr}, wpe_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::LayerNorm ln_f_{nullptr};
  torch::Tensor norm_f_;                 // llama's final RMSNorm weight
  torch::nn::Linear lm_head_{nullptr};   // llama (a file without lm_head.weight ties it: a copy)
};
TORCH_MODULE(DecoderLM);

// Loads Hugging Face weights (GPT2LMHeadModel's or LlamaForCausalLM's names, with or without the
// "transformer." / "model." prefix) into `model`; every parameter must be found with its shape
// (an error names the first that is not). Returns warnings (tensors of the file left unread).
class safetensors_file;
std::vector<std::string> load_decoder_weights(DecoderLM& model, const safetensors_file& file);

// The decoder of `m`, in eval mode on the host: Hugging Face weights from m.weights when given
// (each warning of load_decoder_weights passed to `warn`), random weights by m.seed otherwise.
DecoderLM build_decoder(const model_config& m, const std::function<void(const std::string&)>& warn);

// A copy of `model` with its own parameters, in `dtype` (Float, BFloat16, Half, or Double for the
// accuracy study's reference), eval mode.
DecoderLM copy_decoder(const DecoderLM& model, torch::ScalarType dtype);

// What a greedy generation produced.
struct generation {
  torch::Tensor tokens;           // (B, new) int64: the generated tokens
  double prefill_ms = 0;          // the prompt's forward and the first token's argmax (time to first token)
  std::vector<double> step_ms;    // each later decode step (new − 1 of them)
  int64_t cache_bytes = 0;        // the KV cache's size
};

// Prefills `prompt` (B, P) and decodes `new_tokens` tokens greedily (argmax, ties to the lowest id)
// against a cache of P + new_tokens positions in `cache_dtype`. `pad` (B values or empty): each
// row's left padding (kv_cache::pad), its pad tokens masked out.
generation generate_greedy(DecoderLM& model, const torch::Tensor& prompt, int64_t new_tokens,
                           torch::ScalarType cache_dtype, const std::vector<int64_t>& pad = {});

// Logits (B, new, vocab), float32, at each position that predicts a generated token of `tokens`
// (B, new) after `prompt` (B, P): the model teacher-forced on those tokens in one forward.
torch::Tensor teacher_forced_logits(DecoderLM& model, const torch::Tensor& prompt, const torch::Tensor& tokens,
                                    torch::ScalarType cache_dtype, const std::vector<int64_t>& pad = {});

// Weights and KV-cache bytes one decode step reads at context length `context` for `batch`
// sequences: every block linear's weight, the LM head, and the cache up to that length.
double decode_bytes_per_step(const DecoderLM& model, int64_t batch, int64_t context, int64_t cache_element_bytes);

// The weights' bytes as `model` holds them for its forward, what llama-bench calls the model's
// size: every parameter at its dtype, a block linear with a quantized weight (int8 and
// int8-weight-only) counted as its int8 weight and fp32 per-row scale instead of its float one.
int64_t decoder_weight_bytes(const DecoderLM& model);

// FLOPs of prefilling `batch` prompts of `length` tokens (generate_greedy's prefill): every block
// linear over every token (2·in·out each), attention's Q·Kᵀ and P·V over the causal lower triangle
// (2 · 2 · heads · head_dim per query-key pair, length·(length+1)/2 pairs: the work a causal kernel
// must do, not the masked square a naive one computes), and the LM head at the last position.
// Norms, rotary embeddings, activations and the softmax are not counted.
double decoder_prefill_flops(const DecoderLM& model, int64_t batch, int64_t length);

}  // namespace attnbench
