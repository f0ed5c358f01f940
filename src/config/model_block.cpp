// The `model` block: a preset, explicit dimensions, or a real model (config.json, safetensors,
// TorchScript); and the "attention" and "sdpa_backend" keys a variant shares with it.
#include <fmt/format.h>

#include <limits>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"
#include "config/decoder_presets.hpp"
#include "config/hf_config.hpp"

namespace attnbench::config_reading {
namespace {

namespace fs = std::filesystem;

// With model.config the dimensions come from config.json, so these may not be given too.
const names hf_dim_keys{"preset",     "layers",        "hidden",          "heads",          "head_dim", "ffn",
                        "vocab_size", "max_positions", "type_vocab_size", "layer_norm_eps", "num_labels",
                        "seed",       "causal",        "family",          "kv_heads",       "rope_theta"};
// Without a preset these must all be given; the other model fields have BERT defaults.
const names required_dims{"layers", "hidden", "heads", "vocab_size", "max_positions"};
// Attention names the config layer knows; kernels/kernel_catalog.hpp's names are checked after parsing
// (kernels/kernel_check.hpp), and `attnbench schema` adds them to the printed choices.
const names attention_names{"naive", "sdpa", "custom"};

names preset_names() {
  names out;
  for (const auto& p : defaults::model_presets) out.emplace_back(p.name);
  for (const auto& p : defaults::decoder_presets) out.emplace_back(p.name);
  return out;
}

}  // namespace

key_schema attention_key(std::string help) {
  return choice_key("attention", attention_names, std::move(help)).open("attention");
}

key_schema sdpa_backend_key(std::string help) {
  return choice_key("sdpa_backend", names_of(all_backends), std::move(help));
}

std::shared_ptr<const block_schema> model_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The model (a BERT-style encoder, or a GPT-2- or Llama-style decoder): a preset, explicit dimensions (layers, hidden, heads, vocab_size, max_positions are "
            "required without a preset), or a real model (config, weights, torchscript)";
  b->keys = {
      choice_key("preset", preset_names(),
                 "A named shape: layers, hidden and heads; a decoder's also its family, kv_heads, ffn, vocab_size "
                 "and max_positions (the other keys override it)"),
      choice_key("family", {"bert", "gpt2", "llama"},
                 "bert: the encoder classifier; gpt2 or llama: a decoder-only language model (the generate "
                 "scenario); default: the preset's, else bert"),
      integer_key("kv_heads", "llama: key/value heads of grouped-query attention (heads must be a multiple); default heads")
          .at_least(1),
      number_key("rope_theta", "llama: the rotary embedding's base").above(0).by_default(10000.0),
      integer_key("layers", "Encoder or decoder layers").at_least(1),
      integer_key("hidden", "Hidden size; must be divisible by heads").at_least(1),
      integer_key("heads", "Attention heads; each is hidden / heads wide").at_least(1),
      any_key("head_dim", "Not supported: each head is hidden / heads wide (give model.heads)")
          .with({{"not", ordered_json::object()}}),
      integer_key("ffn", "Feed-forward inner size; default ffn_multiplier × hidden").at_least(1),
      integer_key("vocab_size", "Token vocabulary size").at_least(1).by_default(defaults::vocab_size),
      integer_key("max_positions", "Learned position table: the longest sample")
          .at_least(defaults::min_sample_length)
          .by_default(defaults::max_positions),
      integer_key("type_vocab_size", "Segment types").at_least(1).by_default(defaults::type_vocab_size),
      integer_key("num_labels", "Classes of the classifier head").at_least(1).by_default(defaults::num_labels),
      attention_key("The variants' default attention: naive, sdpa, custom (the device's kernel) or a kernel's name")
          .by_default(to_string(defaults::attention)),
      number_key("layer_norm_eps", "LayerNorm epsilon").above(0).by_default(defaults::layer_norm_eps),
      sdpa_backend_key("The variants' default SDPA backend (attention \"sdpa\" only; efficient, cudnn: CUDA only)")
          .by_default(to_string(defaults::backend)),
      boolean_key("causal", "Decoder-style (prefill) attention mask").by_default(defaults::causal),
      integer_key("seed", "Weight initialisation seed").at_least(0).by_default(defaults::model_seed),
      string_key("weights", "A safetensors file of real weights (needs model.config); relative to the config file"),
      string_key("config", "A Hugging Face config.json giving the model's shape; relative to the config file"),
      string_key("torchscript", "A TorchScript model file; relative to the config file"),
      choice_key("head", {"random", "decisive"},
                 "The classifier head of seeded weights: random (BERT's init) or decisive (fitted to spread "
                 "predictions)")
          .by_default("random"),
  };
  return b;
}

void config_reader::read_model() {
  object_reader m = root_.object("model", true);
  if (!m.present()) return;
  m.check_keys();
  model_config& mc = cfg_.model;
  mc.vocab_size = defaults::vocab_size;
  mc.max_positions = defaults::max_positions;
  mc.type_vocab_size = defaults::type_vocab_size;
  mc.layer_norm_eps = defaults::layer_norm_eps;
  mc.num_labels = defaults::num_labels;
  mc.attention = defaults::attention;
  mc.backend = defaults::backend;
  mc.causal = defaults::causal;
  mc.seed = defaults::model_seed;
  const auto head = m.choice("head");
  if (head) mc.head = *head == "decisive" ? head_kind::decisive : head_kind::random;
  if (read_real_model(m, mc)) {
    if (mc.head == head_kind::decisive)
      m.add("head", "\"decisive\" fits the head of seeded weights; a loaded model keeps its own");
    return;
  }
  bool decoder_preset = false;
  if (auto name = m.choice("preset")) {
    mc.preset = *name;
    for (const auto& p : defaults::model_presets) {
      if (p.name != *name) continue;
      mc.layers = p.layers;
      mc.hidden = p.hidden;
      mc.heads = p.heads;
    }
    for (const auto& p : defaults::decoder_presets) {
      if (p.name != *name) continue;
      decoder_preset = true;
      mc.family = p.family;
      mc.layers = p.layers;
      mc.hidden = p.hidden;
      mc.heads = p.heads;
      mc.kv_heads = p.kv_heads;
      mc.ffn = p.ffn;
      mc.vocab_size = p.vocab_size;
      mc.max_positions = p.max_positions;
      mc.rope_theta = p.rope_theta;
      mc.causal = true;
      mc.layer_norm_eps = p.family == model_family::gpt2 ? 1e-5 : 1e-6;
    }
  } else if (!m.has("preset")) {
    for (const auto& dim : required_dims) m.require(dim, "required without model.preset");
  }
  assign(mc.layers, m.integer("layers"));
  assign(mc.hidden, m.integer("hidden"));
  assign(mc.heads, m.integer("heads"));
  read_family(m, mc, decoder_preset);
  if (auto ffn = m.integer("ffn")) {
    mc.ffn = *ffn;
  } else if (decoder_preset) {
    // the preset's
  } else if (mc.hidden > std::numeric_limits<int64_t>::max() / defaults::ffn_multiplier) {
    // The default ffn, ffn_multiplier × hidden, would overflow int64
    // (tests/fuzz/corpus/config/ffn-overflow.json).
    m.add("hidden", fmt::format("must be <= {} when model.ffn is not given ({} × hidden); got {}",
                                std::numeric_limits<int64_t>::max() / defaults::ffn_multiplier,
                                defaults::ffn_multiplier, mc.hidden));
  } else {
    mc.ffn = defaults::ffn_multiplier * mc.hidden;
  }
  assign(mc.vocab_size, m.integer("vocab_size"));
  assign(mc.max_positions, m.integer("max_positions"));
  assign(mc.type_vocab_size, m.integer("type_vocab_size"));
  assign(mc.num_labels, m.integer("num_labels"));
  assign(mc.layer_norm_eps, m.number("layer_norm_eps"));
  read_attention(m, mc.attention, mc.kernel);
  auto backend = m.enumeration("sdpa_backend", all_backends);
  assign(mc.backend, backend);
  assign(mc.causal, m.boolean("causal"));
  assign(mc.seed, m.unsigned_integer("seed"));
  if (mc.family != model_family::bert && !mc.causal) m.add("causal", "a decoder's attention is causal");

  if (mc.hidden > 0 && mc.heads > 0 && mc.hidden % mc.heads != 0)
    m.add(m.has("heads") ? "heads" : "hidden",
          fmt::format("hidden ({}) must be divisible by heads ({})", mc.hidden, mc.heads));
  // A known key, refused with the reason rather than as a typo.
  if (m.has("head_dim"))
    m.add("head_dim",
          "not supported: each head is hidden / heads wide, so heads × head_dim = hidden; to trade heads against "
          "head_dim at a fixed hidden size give model.heads (or sweep the \"heads\" axis); attention narrower "
          "than hidden comes from pruning heads (a variant's \"pruning\" block)");
  if (backend) check_backend(m, mc.attention, *backend);
}

// model.family, kv_heads, rope_theta: what a decoder adds, and what only an encoder has.
void config_reader::read_family(const object_reader& m, model_config& mc, bool from_preset) {
  if (auto family = m.choice("family")) {
    const model_family f = *family == "gpt2" ? model_family::gpt2 : *family == "llama" ? model_family::llama
                                                                                         : model_family::bert;
    if (from_preset && f != mc.family)
      m.add("family", fmt::format("preset {} is a {} model", quote(mc.preset), to_string(mc.family)));
    if (!from_preset && f != model_family::bert) {
      mc.causal = true;
      mc.layer_norm_eps = f == model_family::gpt2 ? 1e-5 : 1e-6;
      if (f == model_family::llama) mc.rope_theta = 10000.0;
    }
    mc.family = f;
  }
  assign(mc.kv_heads, m.integer("kv_heads"));
  assign(mc.rope_theta, m.number("rope_theta"));
  if (mc.family != model_family::llama) {
    for (const char* key : {"kv_heads", "rope_theta"})
      if (m.has(key)) m.add(key, "only for a llama decoder (model.family \"llama\")");
  } else if (mc.kv_heads > 0 && mc.heads > 0 && mc.heads % mc.kv_heads != 0) {
    m.add("kv_heads", fmt::format("heads ({}) must be a multiple of kv_heads ({})", mc.heads, mc.kv_heads));
  }
  if (mc.family == model_family::llama && mc.kv_heads == 0) mc.kv_heads = mc.heads;
  if (mc.family != model_family::bert) {
    for (const char* key : {"num_labels", "type_vocab_size", "head"})
      if (m.has(key)) m.add(key, fmt::format("only for the encoder: a {} decoder has an LM head", to_string(mc.family)));
  }
}

// A path in the config, resolved against the config's directory and checked readable.
std::optional<std::string> config_reader::readable_file(const object_reader& obj, const std::string& key) {
  auto file = obj.string(key);
  if (!file) return std::nullopt;
  fs::path resolved = *file;
  if (resolved.is_relative()) resolved = fs::path(cfg_.source_path).parent_path() / resolved;
  if (auto why = unreadable_reason(resolved)) {
    obj.add(key, *why);
    return std::nullopt;
  }
  return resolved.string();
}

// model.weights / model.config / model.torchscript. Returns true when the model is a real one
// whose dimensions need no preset.
bool config_reader::read_real_model(const object_reader& m, model_config& mc) {
  const bool hf = m.has("weights") || m.has("config");
  const bool scripted = m.has("torchscript");
  if (!hf && !scripted) return false;
  if (scripted && m.has("weights")) m.add("weights", "not allowed with model.torchscript");
  if (m.has("weights")) m.require("config", "required with model.weights: the dimensions come from config.json");
  if (m.has("config"))
    for (const auto& key : hf_dim_keys)
      if (m.has(key)) m.add(key, "not allowed with model.config: config.json gives the model's shape");
  read_attention(m, mc.attention, mc.kernel);
  auto backend = m.enumeration("sdpa_backend", all_backends);
  assign(mc.backend, backend);
  if (backend) check_backend(m, mc.attention, *backend);
  if (scripted) {
    assign(mc.torchscript, readable_file(m, "torchscript"));
    if (!m.has("config")) {
      // Without a config.json only what the workload needs is known: token range and length.
      for (const auto& key : hf_dim_keys)
        if (key != "vocab_size" && key != "max_positions" && m.has(key))
          m.add(key, "not allowed with model.torchscript (give model.config for the model's shape)");
      assign(mc.vocab_size, m.integer("vocab_size"));
      assign(mc.max_positions, m.integer("max_positions"));
      return true;
    }
  }
  if (auto config = readable_file(m, "config")) {
    mc.hf_config = *config;
    for (auto& p : apply_hf_config(*config, m.path("config"), mc)) log_.add(p.path, p.message);
  }
  // Its header (the classifier head, which decides the output) is read by the model's layer
  // (model/weights_check.hpp), called by the runner before anything runs.
  if (auto weights = readable_file(m, "weights"); weights && !scripted) mc.weights = *weights;
  return true;
}

// "attention": naive, sdpa, custom (the device's kernel) or a kernel's name (checked by
// kernels/kernel_check.hpp: that it exists, runs on the device, and is not asked to train).
void config_reader::read_attention(const object_reader& obj, attention_kind& kind, std::string& kernel) {
  const auto name = obj.string("attention");
  if (!name) return;
  kernel.clear();
  if (*name == "naive") {
    kind = attention_kind::naive;
  } else if (*name == "sdpa") {
    kind = attention_kind::sdpa;
  } else {
    kind = attention_kind::custom;
    if (*name != "custom") kernel = *name;
  }
}

// An explicit sdpa_backend must suit the attention it goes with and the device it runs on.
void config_reader::check_backend(const object_reader& obj, attention_kind attention, sdpa_backend backend) {
  if (attention != attention_kind::sdpa && backend != sdpa_backend::auto_select)
    obj.add("sdpa_backend", fmt::format("{} applies only to attention \"sdpa\"; attention "
                                        "here is {}",
                                        quote(to_string(backend)), quote(to_string(attention))));
  else if (on_cpu_.value_or(false) && (backend == sdpa_backend::efficient || backend == sdpa_backend::cudnn))
    obj.add("sdpa_backend", fmt::format("{} needs a CUDA device; device {} runs on the CPU",
                                        quote(to_string(backend)), quote(cfg_.device)));
}

}  // namespace attnbench::config_reading
