// Config values that registered techniques add to the core schema, so a technique can be one file
// in src/techniques/: it registers its values here (torch-free, read by the config parser) and its
// executor in techniques/registry.hpp (read by the runner). A technique adds values to a variant's
// "precision" key, e.g. "bf16" (techniques/cast_precision.cpp), or a key of its own, e.g.
// "linear": "packed" (techniques/packed_linear.cpp). A variant may choose one registered value.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace attnbench {

struct technique_option {
  std::string key;          // the variant key it adds a value to: "precision", or a new key ("linear")
  std::string value;        // "bf16"
  std::string technique;    // the technique that runs it: its name in techniques/registry.hpp
  std::string summary;      // one line: what choosing it does
  // Relative-L2 bound against the baseline; check.tolerances.<value> overrides. "precision" values
  // only: a value of another key runs under the variant's core precision and takes its tolerance.
  double default_tolerance = 0;
  std::vector<std::string> scenarios;  // the scenarios it runs in ("offline", "server", "train")
  // Variant blocks it cannot be combined with ("offload", "parallel", "pipeline", …).
  std::vector<std::string> excludes;
  // The core precisions ("fp32", "amp-bf16", ...) it runs under; empty: any. Not for "precision" values.
  std::vector<std::string> precisions;
  // Other registered values a variant may choose beside this one, as (key, value): the variant is
  // then run by this option's technique, which applies both ("linear": "packed" with "precision":
  // "bf16": a bf16 cast whose linears are pre-packed). Any other pair of registered values in one
  // variant is refused (one technique per variant).
  std::vector<std::pair<std::string, std::string>> combines_with;
  bool torchscript = false;  // applies to a TorchScript model (which has its own weights and dtype)
  // A block option: the key takes an object ("pruning": {"heads": 2, "by": "weight-norm"}) instead
  // of one of registered strings, and `value` only names the option in messages. The parser hands
  // the object and the run's model to check_block, which returns its problems as (key inside the
  // block, message); the object is kept as written in variant_config::techniques.
  std::function<std::vector<std::pair<std::string, std::string>>(const nlohmann::ordered_json& block,
                                                                 const model_config& model)>
      check_block;
  bool is_block() const { return static_cast<bool>(check_block); }
};

// Called from a static initializer of the technique's file. A (key, value) registered twice is a
// programming error: it throws std::logic_error.
void register_technique_option(technique_option option);

// The option registered for (key, value), or null.
const technique_option* find_technique_option(const std::string& key, const std::string& value);

// The option a variant's value for `key` chose: a string names a registered value, an object is
// the key's block option (technique_option::check_block). Null for anything else.
const technique_option* chosen_option(const std::string& key, const nlohmann::json& value);

// Of the registered options a variant chose (one per key), the one whose technique runs it: the only
// one, or the one that combines with every other (technique_option::combines_with); null when
// none does (the parser refuses such a variant) or the list is empty.
const technique_option* owning_option(const std::vector<const technique_option*>& chosen);

// Every option of `key`, in registration order.
std::vector<const technique_option*> technique_options(const std::string& key);

// The keys options were registered for, each once, in registration order.
std::vector<std::string> technique_option_keys();

}  // namespace attnbench
