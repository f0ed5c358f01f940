#include "kernels/kernel_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "kernels/kernel_catalog.hpp"

namespace attnbench {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string quote(const std::string& s) { return ordered_json(s).dump(); }

bool known(const std::string& name) {
  if (name == "naive" || name == "sdpa" || name == "custom") return true;
  return std::any_of(kernel_catalog.begin(), kernel_catalog.end(), [&](const kernel_entry& k) { return k.name == name; });
}

std::string choices() {
  std::string all = "naive, sdpa, custom";
  for (const auto& k : kernel_catalog) all += fmt::format(", {}", k.name);
  return all;
}

// The "attention" string written in `obj`, if any.
std::optional<std::string> written(const ordered_json* obj) {
  if (!obj || !obj->is_object()) return std::nullopt;
  const auto it = obj->find("attention");
  if (it == obj->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// Where the device runs: true CPU, false CUDA, nullopt when it does not parse (the reader said so).
std::optional<bool> on_cpu(const std::string& device, const device_caps& caps) {
  if (device == "auto") return caps.cuda_devices == 0;
  if (device == "cpu") return true;
  if (device.rfind("cuda", 0) == 0) return false;
  return std::nullopt;
}

}  // namespace

std::vector<problem> kernel_problems(const config& cfg, const device_caps& caps) {
  std::vector<problem> problems;
  const auto unknown = [&](const std::string& path, const std::string& name) {
    problems.push_back({path, fmt::format("expected one of {}; got {}", choices(), quote(name))});
  };
  const ordered_json* model = cfg.raw.is_object() && cfg.raw.contains("model") ? &cfg.raw["model"] : nullptr;
  const auto model_name = written(model);
  const bool model_bad = model_name && !known(*model_name);
  if (model_bad) unknown("model.attention", *model_name);
  const ordered_json* variants = cfg.raw.is_object() && cfg.raw.contains("variants") ? &cfg.raw["variants"] : nullptr;
  const auto cpu = on_cpu(cfg.device, caps);
  for (size_t i = 0; i < cfg.variants.size(); ++i) {
    const variant_config& v = cfg.variants[i];
    const std::string path = fmt::format("variants[{}].attention", i);
    const ordered_json* obj = variants && variants->is_array() && i < variants->size() ? &(*variants)[i] : nullptr;
    const auto own = written(obj);
    if (own && !known(*own)) {
      unknown(path, *own);
      continue;
    }
    if (!own && model_bad) continue;  // inherited a bad name, said once at the model
    if (v.pending || v.attention != attention_kind::custom) continue;  // a pending variant never runs
    if (cfg.scenario == "train")
      problems.push_back({path, fmt::format("{} is a forward-only kernel; the train scenario needs a backward "
                                            "(use \"sdpa\" or \"naive\")",
                                            quote(v.kernel.empty() ? "custom" : v.kernel))});
    if (v.kernel.empty() || !cpu) continue;
    for (const auto& k : kernel_catalog)
      if (k.name == v.kernel && (k.device == "cuda") == *cpu)
        problems.push_back({path, fmt::format("kernel {} runs on {}; device {} {}", quote(v.kernel), k.device,
                                              quote(cfg.device), *cpu ? "runs on the CPU" : "is a CUDA device")});
  }
  return problems;
}

}  // namespace attnbench
