// A BERT-style encoder for sequence classification, in torch::nn:
//   embeddings (token + position + token type, LayerNorm) → N × EncoderLayer → tanh pooler on
//   the first token → linear classifier; or, for a checkpoint without a classifier head
//   (model_config::mean_pool), the mean of the last hidden state over real tokens.
// Weights come from a seed (init_weights) or a Hugging Face checkpoint (hf_weights.hpp), so
// every variant of a run sees identical weights.
#pragma once

#include <functional>
#include <string>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/attention.hpp"

namespace attnbench {

class EmbeddingsImpl : public torch::nn::Module {
 public:
  explicit EmbeddingsImpl(const model_config& cfg);
  // input_ids: (B, S) int64 → (B, S, H)
  torch::Tensor forward(const torch::Tensor& input_ids);

 private:
  torch::nn::Embedding word_{nullptr};
  torch::nn::Embedding position_{nullptr};
  torch::nn::Embedding token_type_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Embeddings);

// Post-LayerNorm layer as in BERT: x = LN(x + Attn(x)); x = LN(x + FFN(x)).
class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const model_config& cfg);
  // x: (B, S, H) → (B, S, H)
  torch::Tensor forward(const torch::Tensor& x, const attention_mask& mask, const attention_settings& how);
  // Every linear of the layer on the path `kind` names (model/linear_kind.hpp), on weights
  // prepared once, the FFN's GELU fused into its first GEMM (model/packed_linear.hpp): inference
  // only, the weights must not change afterwards.
  void pack_linears(linear_kind kind);

 private:
  SelfAttention attention_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr};
  torch::nn::Linear ffn_in_{nullptr};
  torch::nn::Linear ffn_out_{nullptr};
  prepared_linear ffn_in_packed_;  // plain until pack_linears()
  prepared_linear ffn_out_packed_;
  torch::nn::LayerNorm ffn_norm_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class EncoderClassifierImpl : public torch::nn::Module {
 public:
  explicit EncoderClassifierImpl(const model_config& cfg);

  // input_ids, padding_mask: (B, S); padding_mask nonzero marks real tokens. An undefined
  // padding_mask means every token is real (no mask is built: fused kernels need none).
  // Returns logits (B, num_labels), or with mean_pool the mean-pooled embedding (B, hidden), in
  // float32 whatever the compute precision.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& padding_mask);
  // The last hidden state (B, S, H) in the compute precision, before any head.
  torch::Tensor encode(const torch::Tensor& input_ids, const torch::Tensor& padding_mask);
  int64_t output_width() const { return cfg_.mean_pool ? cfg_.hidden : cfg_.num_labels; }

  // The pieces of forward(), for executors that run the layers themselves (offload):
  // forward(ids, mask) == head(layer(L-1)(… layer(0)(embed(ids)) …), mask).
  torch::Tensor embed(const torch::Tensor& input_ids);  // (B, S) → (B, S, H)
  // (B, S, H) → forward()'s output; the padding mask matters only to mean pooling.
  torch::Tensor head(const torch::Tensor& x, const torch::Tensor& padding_mask);
  EncoderLayer layer(int64_t i) const { return EncoderLayer(layers_->ptr<EncoderLayerImpl>(static_cast<size_t>(i))); }
  int64_t num_layers() const { return static_cast<int64_t>(layers_->size()); }
  Embeddings embeddings() const { return embeddings_; }

  // Layers [begin, end) on x (B, S, H) → (B, S, H), one after another: the unit a layer stack
  // (activation checkpointing) splits the encoder into.
  torch::Tensor forward_layers(const torch::Tensor& x, const attention_mask& mask, int64_t begin,
                               int64_t end);
  // Replaces how forward() runs the whole layer stack (default: forward_layers over all of it).
  // The function is owned by the model and must not own the model.
  using layer_stack = std::function<torch::Tensor(const torch::Tensor& x, const attention_mask& mask)>;
  void set_layer_stack(layer_stack stack) { layer_stack_ = std::move(stack); }

  // Sets every dropout probability of the model (BERT's 0.1 by default); active in train() mode.
  void set_dropout(double p);

  // Runs every encoder layer's linears on the path `kind` names from now on (CPU, inference:
  // EncoderLayerImpl::pack_linears). For a copy (replicate): the run's model is shared.
  void pack_linears(linear_kind kind);

  void set_attention(const attention_settings& how) { how_ = how; }
  const attention_settings& attention() const { return how_; }
  const model_config& config() const { return cfg_; }

  // Deterministic BERT-style initialisation from `seed`: weights ~ N(0, 0.02), biases 0,
  // LayerNorm weight 1. Independent of the global RNG and of the device.
  // With model.head "decisive", the classifier is then fitted on seeded probe inputs (not the
  // run's samples): class c reads the c-th principal direction of the probes' pooled features,
  // less the classes' mean direction, scaled so each logit's spread over the probes is 4 and
  // centred on their mean. Predictions follow the input with margins of several logit units,
  // where BERT's random head gives margins near zero that any rounding flips.
  void init_weights(uint64_t seed);

 private:
  void fit_decisive_head(uint64_t seed);

  model_config cfg_;
  attention_settings how_;
  layer_stack layer_stack_;
  Embeddings embeddings_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::Linear pooler_{nullptr};
  torch::nn::Linear classifier_{nullptr};
};
TORCH_MODULE(EncoderClassifier);

int64_t parameter_count(torch::nn::Module& module);

// Fingerprint of every parameter's bytes in registration order (fp32, on the CPU): equal across
// variants and runs exactly when the weights are.
std::string weight_checksum(torch::nn::Module& module);

// A copy of `model` with its own parameters and buffers, on `device`, in eval mode: a data-parallel
// replica. Values are copied exactly, so a replica's outputs equal the original's.
EncoderClassifier replicate(const EncoderClassifier& model, torch::Device device);

}  // namespace attnbench
