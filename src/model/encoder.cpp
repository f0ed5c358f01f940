#include "model/encoder.hpp"

#include <ATen/record_function.h>

#include "common/hash.hpp"
#include "model/packed_linear.hpp"
#include "workload/dataset.hpp"

namespace attnbench {
namespace {

// BERT's initialiser range (initializer_range in Hugging Face's BertConfig).
constexpr double init_std = 0.02;
// BERT's dropout probabilities; only active in training mode (inference runs in eval mode).
constexpr double hidden_dropout = 0.1;
constexpr double attention_dropout = 0.1;

// The decisive head (model.head "decisive"): fitted on this many seeded probe inputs, drawn like a
// synthetic workload (lengths uniform in 8..128) from their own stream, never the run's samples.
constexpr int64_t decisive_probes = 64;
constexpr int64_t decisive_probe_max_length = 128;
constexpr uint64_t decisive_probe_stream = 0x5bd1e9955bd1e995ULL;
// Standard deviation of each logit over the probes: margins of several logit units, against
// rounding errors of ~0.01–0.1 (bf16), so a changed prediction is rare and means something.
constexpr double decisive_logit_spread = 4.0;

torch::nn::LayerNormOptions norm_options(const model_config& cfg) {
  return torch::nn::LayerNormOptions({cfg.hidden}).eps(cfg.layer_norm_eps);
}

}  // namespace

EmbeddingsImpl::EmbeddingsImpl(const model_config& cfg) {
  word_ = register_module("word", torch::nn::Embedding(cfg.vocab_size, cfg.hidden));
  position_ = register_module("position", torch::nn::Embedding(cfg.max_positions, cfg.hidden));
  token_type_ = register_module("token_type", torch::nn::Embedding(cfg.type_vocab_size, cfg.hidden));
  norm_ = register_module("norm", torch::nn::LayerNorm(norm_options(cfg)));
  dropout_ = register_module("dropout", torch::nn::Dropout(hidden_dropout));
}

torch::Tensor EmbeddingsImpl::forward(const torch::Tensor& input_ids) {
  RECORD_USER_SCOPE("embeddings");
  const int64_t seq = input_ids.size(1);
  auto positions = torch::arange(seq, input_ids.options());  // (S)
  // Every sample is one segment (token type 0): row 0 of the table, broadcast.
  auto x = word_(input_ids) + position_(positions).unsqueeze(0) + token_type_->weight[0];  // (B, S, H)
  return dropout_(norm_(x));
}

EncoderLayerImpl::EncoderLayerImpl(const model_config& cfg) {
  attention_ = register_module("attention", SelfAttention(cfg.hidden, cfg.heads, attention_dropout));
  attention_norm_ = register_module("attention_norm", torch::nn::LayerNorm(norm_options(cfg)));
  ffn_in_ = register_module("ffn_in", torch::nn::Linear(cfg.hidden, cfg.ffn));
  ffn_out_ = register_module("ffn_out", torch::nn::Linear(cfg.ffn, cfg.hidden));
  ffn_norm_ = register_module("ffn_norm", torch::nn::LayerNorm(norm_options(cfg)));
  dropout_ = register_module("dropout", torch::nn::Dropout(hidden_dropout));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const attention_mask& mask,
                                        const attention_settings& how) {
  auto attended = dropout_(attention_(x, mask, how));  // (B, S, H)
  torch::Tensor h;
  {
    RECORD_USER_SCOPE("layernorm");
    h = attention_norm_(x + attended);
  }
  torch::Tensor f;
  {
    RECORD_USER_SCOPE("ffn");
    // Exact (erf) GELU, as BERT uses.
    f = dropout_(linear_forward(ffn_out_, ffn_out_packed_, linear_forward(ffn_in_, ffn_in_packed_, h, true)));
  }
  RECORD_USER_SCOPE("layernorm");
  return ffn_norm_(h + f);
}

void EncoderLayerImpl::pack_linears(linear_kind kind) {
  attention_->pack_linears(kind);
  ffn_in_packed_ = pack_linear(ffn_in_, kind);
  ffn_out_packed_ = pack_linear(ffn_out_, kind);
}

EncoderClassifierImpl::EncoderClassifierImpl(const model_config& cfg) : cfg_(cfg) {
  how_.kind = cfg.attention;
  how_.backend = cfg.backend;
  how_.causal = cfg.causal;
  how_.kernel = cfg.kernel;
  embeddings_ = register_module("embeddings", Embeddings(cfg));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < cfg.layers; ++i) layers_->push_back(EncoderLayer(cfg));
  if (cfg.mean_pool) return;  // no head: the output is the pooled hidden state
  pooler_ = register_module("pooler", torch::nn::Linear(cfg.hidden, cfg.hidden));
  classifier_ = register_module("classifier", torch::nn::Linear(cfg.hidden, cfg.num_labels));
}

torch::Tensor EncoderClassifierImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& padding_mask) {
  return head(encode(input_ids, padding_mask), padding_mask);
}

torch::Tensor EncoderClassifierImpl::embed(const torch::Tensor& input_ids) { return embeddings_(input_ids); }

torch::Tensor EncoderClassifierImpl::head(const torch::Tensor& x, const torch::Tensor& padding_mask) {
  if (cfg_.mean_pool) {
    RECORD_USER_SCOPE("pooler");
    // Sum in float32 over real tokens only, as sentence-transformers' mean pooling does (float64
    // for a float64 model: the accuracy study's reference, runner/decision_study.hpp).
    const auto out_type = x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
    auto h = x.to(out_type);
    if (!padding_mask.defined()) return h.mean(1);  // (B, H)
    auto keep = padding_mask.to(out_type).unsqueeze(-1);              // (B, S, 1)
    return (h * keep).sum(1) / keep.sum(1).clamp_min(1.0);                // (B, H)
  }
  torch::Tensor pooled;
  {
    RECORD_USER_SCOPE("pooler");
    using torch::indexing::Slice;
    pooled = torch::tanh(pooler_(x.index({Slice(), 0})));  // (B, H): the [CLS] token
  }
  RECORD_USER_SCOPE("classifier");
  const auto logits = classifier_(pooled);  // (B, num_labels)
  return logits.scalar_type() == torch::kDouble ? logits : logits.to(torch::kFloat);
}

torch::Tensor EncoderClassifierImpl::encode(const torch::Tensor& input_ids, const torch::Tensor& padding_mask) {
  TORCH_CHECK(input_ids.dim() == 2 && (!padding_mask.defined() || padding_mask.sizes() == input_ids.sizes()),
              "input_ids and padding_mask must both be (B, S); got ", input_ids.sizes(), " and ",
              (padding_mask.defined() ? padding_mask.sizes() : c10::IntArrayRef{}));
  TORCH_CHECK(input_ids.size(1) <= cfg_.max_positions, "sequence length ", input_ids.size(1),
              " exceeds the model's ", cfg_.max_positions, " positions");
  const attention_mask mask = make_attention_mask(padding_mask, how_.causal, how_.kind);
  auto x = embed(input_ids);  // (B, S, H)
  return layer_stack_ ? layer_stack_(x, mask) : forward_layers(x, mask, 0, cfg_.layers);
}

torch::Tensor EncoderClassifierImpl::forward_layers(const torch::Tensor& x, const attention_mask& mask,
                                                    int64_t begin, int64_t end) {
  TORCH_CHECK(0 <= begin && begin <= end && end <= cfg_.layers, "layers [", begin, ", ", end, ") out of [0, ",
              cfg_.layers, ")");
  torch::Tensor h = x;
  for (int64_t i = begin; i < end; ++i) {
    RECORD_USER_SCOPE("encoder.layer");  // the unit of the profiler's attention breakdown
    h = layers_->ptr(static_cast<size_t>(i))->as<EncoderLayer>()->forward(h, mask, how_);
  }
  return h;
}

void EncoderClassifierImpl::set_dropout(double p) {
  for (const auto& m : modules(/*include_self=*/false)) {
    if (auto* d = m->as<torch::nn::Dropout>()) d->options.p(p);
    if (auto* a = m->as<SelfAttention>()) a->set_dropout(p);
  }
}

void EncoderClassifierImpl::pack_linears(linear_kind kind) {
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < num_layers(); ++i) layer(i)->pack_linears(kind);
}

void EncoderClassifierImpl::init_weights(uint64_t seed) {
  torch::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (auto& item : named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    // Draw on the CPU with our own generator, then copy: the same numbers on every device.
    torch::Tensor values;
    if (name.find("norm.weight") != std::string::npos) {
      values = torch::ones(p.sizes());
    } else if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
      values = torch::zeros(p.sizes());
    } else {
      values = at::normal(0.0, init_std, p.sizes(), gen);
    }
    p.copy_(values);
  }
  if (cfg_.head == head_kind::decisive && classifier_) fit_decisive_head(seed);
}

void EncoderClassifierImpl::fit_decisive_head(uint64_t seed) {
  torch::NoGradGuard no_grad;
  workload_config probe;
  probe.samples = decisive_probes;
  probe.lengths.kind = length_kind::uniform;
  probe.lengths.max = std::min(decisive_probe_max_length, cfg_.max_positions);
  probe.lengths.min = std::min<int64_t>(8, probe.lengths.max);
  probe.max_length = probe.lengths.max;
  probe.seed = seed ^ decisive_probe_stream;
  const dataset d = make_dataset(probe, cfg_);
  const auto device = classifier_->weight.device();
  auto ids = torch::zeros({decisive_probes, probe.max_length}, torch::kLong);       // (P, S): [PAD] = 0
  auto mask = torch::zeros({decisive_probes, probe.max_length}, torch::kBool);      // (P, S)
  for (int64_t i = 0; i < decisive_probes; ++i) {
    const auto& s = d.samples[static_cast<std::size_t>(i)];
    const auto len = static_cast<int64_t>(s.size());
    ids[i].narrow(0, 0, len).copy_(torch::tensor(s, torch::kLong));
    mask[i].narrow(0, 0, len).fill_(true);
  }
  // The pooled [CLS] features the head reads, in fp32 through the seeded encoder, in eval mode: a
  // module is built in training mode, and dropout there would draw from the global generator and
  // give every process a different head.
  const bool was_training = is_training();
  eval();
  const auto x = encode(ids.to(device), mask.to(device));
  train(was_training);
  const auto pooled = torch::tanh(pooler_(x.select(1, 0))).to(torch::kCPU, torch::kDouble);  // (P, H)
  const auto mean = pooled.mean(0);                                                            // (H)
  const auto centred = pooled - mean;
  // The directions along which the probes' features vary most: class c reads direction c, less
  // the mean of the class directions (the logits sum to 0), so predictions follow the input.
  const auto vh = std::get<2>(torch::linalg_svd(centred, /*full_matrices=*/false));  // (min(P, H), H)
  const int64_t labels = cfg_.num_labels, k = std::min(labels, vh.size(0));
  auto dirs = torch::zeros({labels, cfg_.hidden}, torch::kDouble);
  dirs.narrow(0, 0, k).copy_(vh.narrow(0, 0, k));
  // An SVD direction's sign is arbitrary: fix it so its largest component is positive.
  const auto pivot = dirs.abs().argmax(1, /*keepdim=*/true);
  dirs *= dirs.gather(1, pivot).ge(0).to(torch::kDouble).mul(2).sub(1);  // (L, 1): ±1, a zero row +
  auto w = dirs - dirs.mean(0, /*keepdim=*/true);  // (L, H)
  const double spread = centred.matmul(w.t()).std().item<double>();
  if (spread > 0) w *= decisive_logit_spread / spread;
  const auto b = -w.matmul(mean);  // (L): the probes' mean features sit on every boundary
  classifier_->weight.copy_(w.to(classifier_->weight.options()));
  classifier_->bias.copy_(b.to(classifier_->bias.options()));
}

int64_t parameter_count(torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

std::string weight_checksum(torch::nn::Module& module) {
  fnv1a64 h;
  for (const auto& p : module.parameters()) {
    auto cpu = p.detach().to(torch::kCPU, torch::kFloat).contiguous();
    h.update(cpu.data_ptr(), static_cast<std::size_t>(cpu.numel()) * sizeof(float));
  }
  return h.hex();
}

EncoderClassifier replicate(const EncoderClassifier& model, torch::Device device) {
  EncoderClassifier copy(model->config());
  copy->set_attention(model->attention());
  const torch::NoGradGuard no_grad;
  const auto from = model->named_parameters(/*recurse=*/true);
  for (auto& p : copy->named_parameters(/*recurse=*/true)) p.value().copy_(from[p.key()]);
  const auto from_buffers = model->named_buffers(/*recurse=*/true);
  for (auto& b : copy->named_buffers(/*recurse=*/true)) b.value().copy_(from_buffers[b.key()]);
  copy->eval();
  copy->to(device);
  return copy;
}

}  // namespace attnbench
