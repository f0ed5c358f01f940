// Hugging Face decoder checkpoints (safetensors) → DecoderLM (model/decoder.hpp).
//
// GPT2LMHeadModel ("transformer." prefix optional):
//   wte.weight, wpe.weight, ln_f.*                 → wte.weight, wpe.weight, ln_f.*
//   h.N.ln_1.*, h.N.ln_2.*                         → h.N.ln_1.*, h.N.ln_2.*
//   h.N.attn.c_attn.*, h.N.attn.c_proj.*           → h.N.c_attn.*, h.N.c_proj.*
//   h.N.mlp.c_fc.*, h.N.mlp.c_proj.*               → h.N.c_fc.*, h.N.mlp_c_proj.*
//   GPT-2's Conv1D stores weights as (in, out): they are transposed into Linear's (out, in).
//   lm_head.weight is the token embedding (tied) and is only checked to be it; the causal-mask
//   buffers h.N.attn.bias / masked_bias of older checkpoints are ignored.
// LlamaForCausalLM ("model." prefix optional):
//   embed_tokens.weight, norm.weight, lm_head.weight → wte.weight, norm, lm_head.weight
//   layers.N.self_attn.{q,k,v,o}_proj.weight       → h.N.{q,k,v,o}_proj.weight
//   layers.N.mlp.{gate,up,down}_proj.weight        → h.N.{gate,up,down}_proj.weight
//   layers.N.{input,post_attention}_layernorm.weight → h.N.{input,post_attention}_layernorm
//   A file without lm_head.weight (tie_word_embeddings) gets a copy of the token embedding.
#include <map>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "model/decoder.hpp"
#include "model/hf_weights.hpp"
#include "model/safetensors.hpp"

namespace attnbench {
namespace {

constexpr const char* json_path = "model.weights";

struct target {
  std::string parameter;
  bool transpose = false;
};

std::string without_prefix(const std::string& name, const char* prefix) {
  const std::string p = prefix;
  return name.rfind(p, 0) == 0 ? name.substr(p.size()) : name;
}

// The parameter a file's tensor fills, nullopt for one to ignore; throws for one with no place.
std::optional<target> map_name(model_family family, const std::string& raw, const std::string& file) {
  static const std::regex gpt2_layer(R"(h\.(\d+)\.(ln_1|ln_2|attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj|attn\.bias|attn\.masked_bias)(\.weight|\.bias)?)");
  static const std::regex llama_layer(
      R"(layers\.(\d+)\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj|input_layernorm|post_attention_layernorm|self_attn\.rotary_emb\.inv_freq)(\.weight)?)");
  std::smatch m;
  if (family == model_family::gpt2) {
    const std::string name = without_prefix(raw, "transformer.");
    if (name == "wte.weight" || name == "wpe.weight" || name == "ln_f.weight" || name == "ln_f.bias")
      return target{name};
    if (name == "lm_head.weight") return std::nullopt;  // tied: checked by the caller
    if (std::regex_match(name, m, gpt2_layer)) {
      const std::string part = m[2], kind = m[3];
      if (part == "attn.bias" || part == "attn.masked_bias") return std::nullopt;  // mask buffers
      if (kind.empty()) throw input_error(json_path, fmt::format("{}: unexpected tensor \"{}\"", file, raw));
      const std::string layer = "h." + std::string(m[1]) + ".";
      if (part == "ln_1" || part == "ln_2") return target{layer + part + kind};
      const std::string mine = part == "attn.c_attn" ? "c_attn" : part == "attn.c_proj" ? "c_proj"
                               : part == "mlp.c_fc"  ? "c_fc"
                                                     : "mlp_c_proj";
      return target{layer + mine + kind, kind == ".weight"};
    }
  } else {
    const std::string name = without_prefix(raw, "model.");
    if (name == "embed_tokens.weight") return target{"wte.weight"};
    if (name == "norm.weight") return target{"norm"};
    if (name == "lm_head.weight") return target{"lm_head.weight"};
    if (std::regex_match(name, m, llama_layer)) {
      const std::string part = m[2];
      if (part == "self_attn.rotary_emb.inv_freq") return std::nullopt;  // recomputed from rope_theta
      const std::string layer = "h." + std::string(m[1]) + ".";
      if (part == "input_layernorm" || part == "post_attention_layernorm") return target{layer + part};
      return target{layer + part.substr(part.find('.') + 1) + ".weight"};
    }
  }
  throw input_error(json_path, fmt::format("{}: unexpected tensor \"{}\" (no place for it in a {} decoder)", file,
                                           raw, to_string(family)));
}

}  // namespace

std::vector<std::string> load_decoder_weights(DecoderLM& model, const safetensors_file& file) {
  torch::NoGradGuard no_grad;
  std::vector<std::string> warnings;
  const model_family family = model->dims().family;
  auto params = model->named_parameters(/*recurse=*/true);
  std::map<std::string, std::string> filled;  // parameter → the tensor that filled it
  const safetensors_tensor* tied_head = nullptr;
  for (const auto& t : file.header().tensors) {
    const auto where = map_name(family, t.name, file.path());
    if (!where) {
      if (family == model_family::gpt2 && without_prefix(t.name, "transformer.") == "lm_head.weight") tied_head = &t;
      continue;
    }
    torch::Tensor* p = params.find(where->parameter);
    if (!p)
      throw input_error(json_path, fmt::format("{}: unexpected tensor \"{}\" (the model has {} layers)", file.path(),
                                               t.name, model->dims().layers));
    std::vector<int64_t> want = p->sizes().vec();
    if (where->transpose) std::swap(want[0], want[1]);
    if (t.shape != want)
      throw input_error(json_path, fmt::format("{}: tensor \"{}\" has shape [{}]; the model's dimensions make it [{}]",
                                               file.path(), t.name, fmt::join(t.shape, ", "), fmt::join(want, ", ")));
    auto values = read_float(file, t);
    if (!torch::isfinite(values).all().item<bool>())
      warnings.push_back(fmt::format("{}: tensor \"{}\" holds non-finite values (NaN or Inf)", file.path(), t.name));
    p->copy_(where->transpose ? values.t() : values);
    if (auto [it, inserted] = filled.emplace(where->parameter, t.name); !inserted)
      throw input_error(json_path, fmt::format("{}: tensors \"{}\" and \"{}\" are the same weight", file.path(),
                                               it->second, t.name));
  }
  if (family == model_family::llama && !filled.count("lm_head.weight") && filled.count("wte.weight")) {
    params["lm_head.weight"].copy_(params["wte.weight"]);
    filled.emplace("lm_head.weight", "(embed_tokens.weight: tied)");
    warnings.push_back(fmt::format("{}: no lm_head.weight; the LM head reads the token embedding (tied)", file.path()));
  }
  if (tied_head && filled.count("wte.weight") && !read_float(file, *tied_head).equal(params["wte.weight"]))
    throw input_error(json_path, fmt::format("{}: lm_head.weight differs from wte.weight; GPT-2's LM head is tied to the "
                                             "token embedding",
                                             file.path()));
  std::vector<std::string> missing;
  for (const auto& item : params)
    if (!filled.count(item.key())) missing.push_back(item.key());
  if (!missing.empty())
    throw input_error(json_path, fmt::format("{}: no tensor for the model's {}{}", file.path(), missing.front(),
                                             missing.size() > 1 ? fmt::format(" and {} more", missing.size() - 1) : ""));
  return warnings;
}

DecoderLM build_decoder(const model_config& m, const std::function<void(const std::string&)>& warn) {
  DecoderLM decoder(m);
  if (m.weights.empty()) {
    decoder->init_weights(m.seed);
  } else {
    const safetensors_file weights(m.weights);
    for (const auto& w : load_decoder_weights(decoder, weights))
      if (warn) warn(w);
  }
  decoder->eval();
  return decoder;
}

}  // namespace attnbench
