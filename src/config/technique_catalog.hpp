// Config values that registered techniques add to the core schema, so a technique can be one file
// in src/techniques/: it registers its values here (torch-free, read by the config parser) and its
// executor in techniques/registry.hpp (read by the runner). Today a technique can add values of a
// variant's "precision" key, e.g. "bf16" (techniques/cast_precision.cpp).
#pragma once

#include <string>
#include <vector>

namespace attnbench {

struct technique_option {
  std::string key;          // the variant key it adds a value to: "precision"
  std::string value;        // "bf16"
  std::string technique;    // the technique that runs it: its name in techniques/registry.hpp
  std::string summary;      // one line: what choosing it does
  double default_tolerance = 0;  // relative-L2 bound against the baseline; check.tolerances.<value> overrides
  std::vector<std::string> scenarios;  // the scenarios it runs in ("offline", "server", "train")
  // Variant blocks it cannot be combined with ("offload", "parallel", "pipeline", …).
  std::vector<std::string> excludes;
  bool torchscript = false;  // applies to a TorchScript model (which has its own weights and dtype)
};

// Called from a static initializer of the technique's file. A (key, value) registered twice is a
// programming error: it throws std::logic_error.
void register_technique_option(technique_option option);

// The option registered for (key, value), or null.
const technique_option* find_technique_option(const std::string& key, const std::string& value);

// Every option of `key`, in registration order.
std::vector<const technique_option*> technique_options(const std::string& key);

}  // namespace attnbench
