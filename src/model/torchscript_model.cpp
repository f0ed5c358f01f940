#include "model/torchscript_model.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "config/technique_catalog.hpp"

namespace attnbench {
namespace {

torch::Tensor first_tensor(const c10::IValue& out, const std::string& path) {
  if (out.isTensor()) return out.toTensor();
  if (out.isTuple() && !out.toTupleRef().elements().empty())
    return first_tensor(out.toTupleRef().elements()[0], path);
  if (out.isList() && !out.toListRef().empty()) return first_tensor(out.toListRef()[0], path);
  if (out.isGenericDict()) {
    const auto dict = out.toGenericDict();
    for (const char* key : {"logits", "last_hidden_state"})
      if (dict.contains(key)) return first_tensor(dict.at(key), path);
  }
  throw input_error(
      "model.torchscript",
      fmt::format("{}: the module returned {}; expected a tensor, a tuple starting with one, or a dict "
                  "with \"logits\" or \"last_hidden_state\"",
                  path, out.tagKind()));
}

}  // namespace

torchscript_model::torchscript_model(const std::string& path) : path_(path) {
  try {
    module_ = std::make_shared<torch::jit::Module>(torch::jit::load(path));
  } catch (const c10::Error& e) {
    throw input_error("model.torchscript",
                      fmt::format("{}: not a TorchScript module: {}", path, e.what_without_backtrace()));
  }
  module_->eval();
}

void torchscript_model::to(torch::Device device) { module_->to(device); }

torch::Tensor torchscript_model::forward(const torch::Tensor& input_ids, const torch::Tensor& padding_mask) {
  // The module's signature takes a mask: an all-real batch gets a mask of ones.
  const torch::Tensor mask =
      padding_mask.defined() ? padding_mask.to(torch::kLong) : torch::ones_like(input_ids, torch::kLong);
  const torch::Tensor out = first_tensor(module_->forward({input_ids, mask}), path_);
  if (out.dim() == 2) return out.to(torch::kFloat);  // (B, C)
  TORCH_CHECK(out.dim() == 3 && out.size(0) == input_ids.size(0) && out.size(1) == input_ids.size(1),
              "the TorchScript module returned shape ", out.sizes(),
              "; expected (B, C) or (B, S, H) for input ", input_ids.sizes());
  auto h = out.to(torch::kFloat);                         // (B, S, H)
  auto keep = mask.to(torch::kFloat).unsqueeze(-1);       // (B, S, 1)
  return (h * keep).sum(1) / keep.sum(1).clamp_min(1.0);  // (B, H)
}

int64_t torchscript_model::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : module_->parameters()) n += p.numel();
  return n;
}

std::string torchscript_model::weight_checksum() const {
  fnv1a64 h;
  for (const auto& p : module_->parameters()) {
    auto cpu = p.detach().to(torch::kCPU, torch::kFloat).contiguous();
    h.update(cpu.data_ptr(), static_cast<std::size_t>(cpu.numel()) * sizeof(float));
  }
  return h.hex();
}

std::string torchscript_unsupported(const std::string& technique, const nlohmann::json& value) {
  if (const technique_option* o = chosen_option(technique, value))
    return o->torchscript ? "" : "unsupported for TorchScript models";
  return technique == "offload" || technique == "checkpointing" || technique == "parallel" ||
                 technique == "pipeline"
             ? "unsupported for TorchScript models"
             : "";
}

}  // namespace attnbench
