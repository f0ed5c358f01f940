#include "model/hf_weights.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <map>
#include <optional>
#include <regex>

#include "common/error.hpp"

namespace attnbench {
namespace {

constexpr const char* json_path = "model.weights";

// Where one checkpoint tensor goes: a parameter, and for q/k/v which third of it.
struct target {
  std::string parameter;
  int64_t part = -1;  // 0, 1, 2 for query, key, value rows of the fused qkv; -1 for the whole
};

std::optional<target> map_name(std::string name) {
  if (name.rfind("bert.", 0) == 0) name = name.substr(5);
  // Old checkpoints call LayerNorm's affine parameters gamma and beta.
  const auto suffix = [&](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  if (suffix("LayerNorm.gamma")) name = name.substr(0, name.size() - 5) + "weight";
  if (suffix("LayerNorm.beta")) name = name.substr(0, name.size() - 4) + "bias";

  static const std::map<std::string, std::string> fixed{
      {"embeddings.word_embeddings.weight", "embeddings.word.weight"},
      {"embeddings.position_embeddings.weight", "embeddings.position.weight"},
      {"embeddings.token_type_embeddings.weight", "embeddings.token_type.weight"},
      {"embeddings.LayerNorm.weight", "embeddings.norm.weight"},
      {"embeddings.LayerNorm.bias", "embeddings.norm.bias"},
      {"pooler.dense.weight", "pooler.weight"},
      {"pooler.dense.bias", "pooler.bias"},
      {"classifier.weight", "classifier.weight"},
      {"classifier.bias", "classifier.bias"}};
  if (auto it = fixed.find(name); it != fixed.end()) return target{it->second};

  static const std::regex layer(R"(encoder\.layer\.(\d+)\.(.+)\.(weight|bias))");
  std::smatch m;
  if (!std::regex_match(name, m, layer)) return std::nullopt;
  const std::string prefix = "layers." + m[1].str() + ".";
  const std::string what = m[2].str();
  const std::string kind = m[3].str();
  static const std::map<std::string, std::pair<std::string, int64_t>> within{
      {"attention.self.query", {"attention.qkv", 0}},
      {"attention.self.key", {"attention.qkv", 1}},
      {"attention.self.value", {"attention.qkv", 2}},
      {"attention.output.dense", {"attention.out_proj", -1}},
      {"attention.output.LayerNorm", {"attention_norm", -1}},
      {"intermediate.dense", {"ffn_in", -1}},
      {"output.dense", {"ffn_out", -1}},
      {"output.LayerNorm", {"ffn_norm", -1}}};
  auto it = within.find(what);
  if (it == within.end()) return std::nullopt;
  return target{prefix + it->second.first + "." + kind, it->second.second};
}

bool ignored(const std::string& name) {
  return name == "embeddings.position_ids" || name == "bert.embeddings.position_ids";
}

torch::ScalarType torch_dtype(const safetensors_tensor& t) {
  if (t.dtype == "F32") return torch::kFloat;
  if (t.dtype == "F16") return torch::kHalf;
  if (t.dtype == "BF16") return torch::kBFloat16;
  if (t.dtype == "F64") return torch::kDouble;
  throw input_error(
      json_path,
      fmt::format("tensor \"{}\" has dtype {}; weights must be F32, F16, BF16 or F64", t.name, t.dtype));
}

// Every tensor a checkpoint for this model must hold, by its Hugging Face name.
std::vector<std::string> expected_names(const model_config& cfg) {
  std::vector<std::string> out{"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                               "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
                               "embeddings.LayerNorm.bias"};
  for (int64_t i = 0; i < cfg.layers; ++i)
    for (const char* part :
         {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
          "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"})
      for (const char* kind : {"weight", "bias"})
        out.push_back(fmt::format("encoder.layer.{}.{}.{}", i, part, kind));
  if (!cfg.mean_pool)
    for (const char* name :
         {"pooler.dense.weight", "pooler.dense.bias", "classifier.weight", "classifier.bias"})
      out.emplace_back(name);
  return out;
}

}  // namespace

torch::Tensor read_float(const safetensors_file& file, const safetensors_tensor& t) {
  // Copied out of the mapping: a tensor's offset need not be aligned.
  auto out = torch::empty(t.shape, torch::TensorOptions().dtype(torch_dtype(t)));
  if (t.numel() > 0) std::memcpy(out.data_ptr(), file.data(t), static_cast<std::size_t>(t.end - t.begin));
  return out.to(torch::kFloat);
}

std::vector<std::string> load_hf_weights(EncoderClassifierImpl& model, const safetensors_file& file) {
  torch::NoGradGuard no_grad;
  std::vector<std::string> warnings;
  auto params = model.named_parameters(/*recurse=*/true);
  std::map<std::pair<std::string, int64_t>, std::string>
      filled;  // (parameter, part) → the tensor that filled it
  for (const auto& t : file.header().tensors) {
    if (ignored(t.name)) continue;
    const auto where = map_name(t.name);
    torch::Tensor* p = where ? params.find(where->parameter) : nullptr;
    if (!p) {
      // The pooler of a checkpoint without a classifier is unused by mean pooling: skip it.
      if (model.config().mean_pool && t.name.find("pooler.") != std::string::npos) continue;
      throw input_error(json_path,
                        fmt::format("{}: unexpected tensor \"{}\" (no place for it in a BERT encoder "
                                    "of {} layers)",
                                    file.path(), t.name, model.config().layers));
    }
    std::vector<int64_t> want = p->sizes().vec();
    if (where->part >= 0) want[0] /= 3;
    if (t.shape != want)
      throw input_error(
          json_path, fmt::format("{}: tensor \"{}\" has shape [{}]; config.json makes it [{}]", file.path(),
                                 t.name, fmt::join(t.shape, ", "), fmt::join(want, ", ")));
    auto values = read_float(file, t);
    if (!torch::isfinite(values).all().item<bool>())
      warnings.push_back(fmt::format("{}: tensor \"{}\" holds {} non-finite values (NaN or Inf)", file.path(),
                                     t.name, (~torch::isfinite(values)).sum().item<int64_t>()));
    if (where->part >= 0)
      p->narrow(0, where->part * want[0], want[0]).copy_(values);
    else
      p->copy_(values);
    auto [it, inserted] = filled.emplace(std::make_pair(where->parameter, where->part), t.name);
    if (!inserted)
      throw input_error(json_path, fmt::format("{}: tensors \"{}\" and \"{}\" are the same weight",
                                               file.path(), it->second, t.name));
  }
  std::vector<std::string> missing;
  for (const auto& name : expected_names(model.config())) {
    const auto where = map_name(name);
    if (!filled.count({where->parameter, where->part})) missing.push_back(name);
  }
  if (!missing.empty())
    throw input_error(json_path,
                      fmt::format("{}: missing tensor{} \"{}\"{}", file.path(), missing.size() > 1 ? "s" : "",
                                  missing.front(),
                                  missing.size() > 1 ? fmt::format(" and {} more", missing.size() - 1) : ""));
  return warnings;
}

}  // namespace attnbench
