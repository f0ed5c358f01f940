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
  if (auto type = text_field("model_type"); !type || *type != "bert")
    add(fmt::format("\"model_type\" must be \"bert\" (the built-in encoder is BERT); got {}",
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
