#include "config/hf_config.hpp"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/config_defaults.hpp"

namespace attnbench {

std::vector<problem> apply_hf_config(const std::string& path, const std::string& json_path,
                                     model_config& model) {
  std::vector<problem> problems;
  const auto add = [&](const std::string& what) {
    problems.push_back({json_path, fmt::format("{}: {}", path, what)});
  };
  std::ifstream in(path);
  if (!in) {
    add("cannot read");
    return problems;
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    add(fmt::format("not valid JSON: {}", e.what()));
    return problems;
  }
  if (!doc.is_object()) {
    add("expected a JSON object");
    return problems;
  }
  // An integer >= 1 at `key`: required, or `fallback` when absent.
  const auto dim = [&](const char* key, std::optional<int64_t> fallback) -> int64_t {
    auto it = doc.find(key);
    if (it == doc.end()) {
      if (!fallback) add(fmt::format("\"{}\" is missing", key));
      return fallback.value_or(0);
    }
    if (!it->is_number_integer() || it->get<int64_t>() < 1) {
      add(fmt::format("\"{}\" must be an integer >= 1; got {}", key, it->dump()));
      return 0;
    }
    return it->get<int64_t>();
  };
  const auto text_field = [&](const char* key) -> std::optional<std::string> {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const auto type = text_field("model_type");
  const auto eps = [&](const char* key, double fallback) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) return fallback;
    if (it->is_number() && it->get<double>() > 0) return it->get<double>();
    add(fmt::format("\"{}\" must be a number > 0; got {}", key, it->dump()));
    return fallback;
  };
  const auto must_be = [&](const char* key, const nlohmann::json& want, const char* why) {
    auto it = doc.find(key);
    if (it != doc.end() && !it->is_null() && *it != want)
      add(fmt::format("\"{}\" must be {} ({}); got {}", key, want.dump(), why, it->dump()));
  };
  if (type && *type == "llama") {
    // LlamaForCausalLM: RMSNorm, rotary embeddings without scaling, SwiGLU, grouped-query attention.
    model.family = model_family::llama;
    model.causal = true;
    model.layers = dim("num_hidden_layers", std::nullopt);
    model.hidden = dim("hidden_size", std::nullopt);
    model.heads = dim("num_attention_heads", std::nullopt);
    model.kv_heads = dim("num_key_value_heads", model.heads);
    model.ffn = dim("intermediate_size", std::nullopt);
    model.vocab_size = dim("vocab_size", std::nullopt);
    model.max_positions = dim("max_position_embeddings", std::nullopt);
    model.layer_norm_eps = eps("rms_norm_eps", 1e-6);
    model.rope_theta = eps("rope_theta", 10000.0);
    must_be("hidden_act", "silu", "the decoder's SwiGLU");
    must_be("attention_bias", false, "the decoder's attention has no biases");
    must_be("mlp_bias", false, "the decoder's MLP has no biases");
    // transformers 5 writes {"rope_parameters": {"rope_type": "default", "rope_theta": θ}}.
    if (auto it = doc.find("rope_parameters"); it != doc.end() && !it->is_null()) {
      if (!it->is_object() || it->value("rope_type", std::string("default")) != "default")
        add(fmt::format("\"rope_parameters\" must have rope_type \"default\" (the decoder's rotary embeddings are "
                        "unscaled); got {}",
                        it->dump()));
      else if (auto theta = it->find("rope_theta"); theta != it->end() && theta->is_number() && theta->get<double>() > 0)
        model.rope_theta = theta->get<double>();
    }
    if (auto it = doc.find("rope_scaling"); it != doc.end() && !it->is_null())
      add(fmt::format("\"rope_scaling\" must be null (the decoder's rotary embeddings are unscaled); got {}",
                      it->dump()));
    if (auto it = doc.find("head_dim"); it != doc.end() && !it->is_null() && model.heads > 0 &&
                                        (!it->is_number_integer() || it->get<int64_t>() * model.heads != model.hidden))
      add(fmt::format("\"head_dim\" must be hidden_size / num_attention_heads ({}); got {}",
                      model.hidden / model.heads, it->dump()));
    if (model.hidden > 0 && model.heads > 0 && model.hidden % model.heads != 0)
      add(fmt::format("\"hidden_size\" ({}) must be divisible by \"num_attention_heads\" ({})", model.hidden,
                      model.heads));
    if (model.kv_heads > 0 && model.heads % model.kv_heads != 0)
      add(fmt::format("\"num_attention_heads\" ({}) must be a multiple of \"num_key_value_heads\" ({})", model.heads,
                      model.kv_heads));
  } else if (type && *type == "gpt2") {
    // GPT2LMHeadModel: learned positions, pre-LayerNorm, tanh-GELU MLP, tied LM head.
    model.family = model_family::gpt2;
    model.causal = true;
    model.layers = dim("n_layer", std::nullopt);
    model.hidden = dim("n_embd", std::nullopt);
    model.heads = dim("n_head", std::nullopt);
    model.kv_heads = model.heads;
    model.ffn = doc.contains("n_inner") && !doc["n_inner"].is_null() ? dim("n_inner", std::nullopt) : 4 * model.hidden;
    model.vocab_size = dim("vocab_size", std::nullopt);
    model.max_positions = dim("n_positions", std::nullopt);
    model.layer_norm_eps = eps("layer_norm_epsilon", 1e-5);
    must_be("activation_function", "gelu_new", "the decoder's tanh GELU");
    if (model.hidden > 0 && model.heads > 0 && model.hidden % model.heads != 0)
      add(fmt::format("\"n_embd\" ({}) must be divisible by \"n_head\" ({})", model.hidden, model.heads));
  }
  if (type && (*type == "llama" || *type == "gpt2")) return problems;
  if (!type || *type != "bert")
    add(fmt::format("\"model_type\" must be \"bert\" (the built-in encoder), \"llama\" or \"gpt2\" (the "
                    "decoders); got {}",
                    type ? "\"" + *type + "\"" : std::string("none")));
  if (auto act = text_field("hidden_act"); act && *act != "gelu")
    add(fmt::format("\"hidden_act\" must be \"gelu\" (the encoder's exact GELU); got \"{}\"", *act));
  if (auto pos = text_field("position_embedding_type"); pos && *pos != "absolute")
    add(fmt::format("\"position_embedding_type\" must be \"absolute\"; got \"{}\"", *pos));
  if (doc.value("is_decoder", false)) add("\"is_decoder\" is true; the built-in encoder is bidirectional");

  model.layers = dim("num_hidden_layers", std::nullopt);
  model.hidden = dim("hidden_size", std::nullopt);
  model.heads = dim("num_attention_heads", std::nullopt);
  model.ffn = dim("intermediate_size", std::nullopt);
  model.vocab_size = dim("vocab_size", std::nullopt);
  model.max_positions = dim("max_position_embeddings", std::nullopt);
  model.type_vocab_size = dim("type_vocab_size", defaults::type_vocab_size);
  if (auto it = doc.find("layer_norm_eps"); it != doc.end()) {
    if (it->is_number() && it->get<double>() > 0)
      model.layer_norm_eps = it->get<double>();
    else
      add(fmt::format("\"layer_norm_eps\" must be a number > 0; got {}", it->dump()));
  }
  if (model.hidden > 0 && model.heads > 0 && model.hidden % model.heads != 0)
    add(fmt::format("\"hidden_size\" ({}) must be divisible by \"num_attention_heads\" ({})", model.hidden,
                    model.heads));
  return problems;
}

}  // namespace attnbench
