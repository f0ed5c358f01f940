// A TorchScript module (scripted or traced) as the benchmarked model: it takes
// (input_ids, attention_mask), both int64 (B, S), and returns logits (B, C) or a hidden state
// (B, S, H) — directly, as the first element of a tuple, or under "logits" /
// "last_hidden_state" in a dict. A hidden state is mean-pooled over real tokens to (B, H), the
// same default as a safetensors checkpoint without a classifier head.
#pragma once

#include <memory>
#include <string>

#include <torch/script.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

namespace attnbench {

class torchscript_model {
 public:
  // Throws input_error (path "model.torchscript") when the file is not a TorchScript module.
  explicit torchscript_model(const std::string& path);

  void to(torch::Device device);
  // input_ids, padding_mask: (B, S); an undefined mask means every token is real.
  // Returns (B, C) float32.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& padding_mask);

  int64_t parameter_count() const;
  std::string weight_checksum() const;  // as weight_checksum() for built-in models

 private:
  std::string path_;
  std::shared_ptr<torch::jit::Module> module_;
};

// Why a technique cannot run on a TorchScript model, or "" when it can: offload, pipeline and
// checkpointing need the model's layers, which a TorchScript module does not expose. `value`: the
// variant's value of that key, for values registered techniques add (config/technique_catalog.hpp),
// which say themselves whether they apply to TorchScript.
std::string torchscript_unsupported(const std::string& technique, const nlohmann::json& value = nullptr);

}  // namespace attnbench
