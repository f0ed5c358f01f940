// The `variants` list: each variant's own keys (name, precision, attention, …), the keys and values
// registered techniques add (config/technique_catalog.hpp), and which of its technique blocks
// (batching, checkpointing, offload, parallel, pipeline: each in its own file) go together.
#include <fmt/format.h>

#include <map>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"
#include "config/fp16_training.hpp"
#include "config/technique_catalog.hpp"

namespace attnbench::config_reading {
namespace {

// Technique blocks. offload and pipeline are read below; the others belong to later issues and
// only a pending variant may carry them (stored, not validated).
const names technique_keys{"offload", "parallel", "pipeline"};

// "precision": "amp" asks the runner for the device's AMP dtype (techniques/amp_choice.hpp).
// Not a tolerance key: the resolved precision's tolerance applies.
constexpr const char* amp_auto_precision = "amp";

// What a variant's "precision" may be: the tolerance keys and "amp".
names precision_values() {
  names all = tolerance_keys();
  all.insert(all.begin() + static_cast<std::ptrdiff_t>(all_precisions.size()), amp_auto_precision);
  return all;
}

// A key a registered technique adds beside "precision" ("linear": "packed", a "pruning" block).
key_schema technique_key(const std::string& key) {
  std::string help;
  for (const auto* o : technique_options(key))
    help += (help.empty() ? "" : "; ") + (o->is_block() ? std::string() : quote(o->value) + ": ") + o->summary;
  if (const technique_option* block = chosen_option(key, nlohmann::json::object())) {
    // Its technique checks the object against the run's model (technique_option::check_block).
    return object_key(key, nullptr, "Registered technique " + quote(block->technique) + ": " + help);
  }
  names values;
  for (const auto* o : technique_options(key)) values.push_back(o->value);
  return choice_key(key, values, "Registered technique values: " + help);
}

}  // namespace

std::shared_ptr<const block_schema> variant_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "One variant: what it changes from the model's defaults; measured against the baseline";
  std::string precision_help =
      "fp32, amp-bf16, amp-fp16 (autocast), amp (the device's AMP dtype), or a registered technique's value";
  for (const auto* o : technique_options("precision")) precision_help += "; " + quote(o->value) + ": " + o->summary;
  b->keys = {
      string_key("name", "Unique within the config; the baseline names one").is_required(),
      string_key("description", "What the variant is; generated from its differences when absent").empty_allowed(),
      choice_key("precision", precision_values(), precision_help).by_default(to_string(defaults::precision)),
      attention_key("naive, sdpa, custom (the device's kernel) or a kernel's name; default model.attention"),
      sdpa_backend_key("The SDPA backend (attention \"sdpa\" only); default model.sdpa_backend"),
      object_key("batching", batching_schema(), "How samples are grouped into batches"),
      object_key("checkpointing", checkpointing_schema(), "Activation checkpointing (train scenario)"),
      string_key("pending", "Why the variant is not run yet: it is listed as SKIPPED, its blocks stored unchecked"),
      object_key("offload", offload_schema(), "Stream the encoder layers' weights from host memory"),
      object_key("parallel", parallel_schema(), "Data parallel workers, each with the whole model"),
      object_key("pipeline", pipeline_schema(), "Pipeline model parallel: stages of encoder layers"),
  };
  for (const auto& key : technique_option_keys())
    if (!b->find(key)) b->keys.push_back(technique_key(key));
  return b;
}

void config_reader::read_variants() {
  root_.require("variants");
  const ordered_json* list = root_.find("variants");
  if (!list) return;
  if (!list->is_array()) {
    log_.type_error("variants", "an array", *list);
    return;
  }
  if (list->empty()) root_.add("variants", "must list at least one variant");
  const block_schema* variant = root_.spec("variants").items->block.get();
  std::map<std::string, std::string> first_path;  // variant name → where it was first defined
  for (size_t i = 0; i < list->size(); ++i) {
    object_reader v(&(*list)[i], fmt::format("variants[{}]", i), log_, variant);
    if (!(*list)[i].is_object()) {
      log_.type_error(v.path(), "an object", (*list)[i]);
      continue;
    }
    variant_config& vc = cfg_.variants.emplace_back(read_variant(v));
    if (vc.name.empty()) continue;
    auto [it, inserted] = first_path.emplace(vc.name, v.path());
    if (!inserted) v.add("name", fmt::format("duplicate variant name {} (first at {})", quote(vc.name), it->second));
  }
}

variant_config config_reader::read_variant(const object_reader& v) {
  variant_config vc;
  v.check_keys();
  v.require("name");
  assign(vc.name, v.string("name"));
  if (const ordered_json* d = v.find("description")) {
    if (d->is_string())
      vc.description = d->get<std::string>();  // may be empty: generated
    else
      log_.type_error(v.path("description"), "a string", *d);
  }
  vc.precision = defaults::precision;
  read_precision(v, vc);
  vc.attention = cfg_.model.attention;
  vc.kernel = cfg_.model.kernel;
  read_attention(v, vc.attention, vc.kernel);
  read_technique_keys(v, vc);
  auto backend = v.enumeration("sdpa_backend", all_backends);
  // A naive or custom variant under an sdpa model default has no backend to inherit.
  vc.backend =
      backend.value_or(vc.attention != attention_kind::sdpa ? sdpa_backend::auto_select : cfg_.model.backend);
  vc.pending = v.string("pending");

  read_batching(v.object("batching"), vc.batching);
  read_checkpointing(v.object("checkpointing"), vc.checkpointing);

  const bool pending = v.has("pending");
  for (const auto& key : technique_keys) {
    const ordered_json* block = v.find(key);
    if (!block) continue;
    if (key == "offload" && !pending) {
      read_offload(v.object("offload"), vc);
      // Offloaded training already recomputes every layer in backward (offload_trainer.hpp):
      // segments of several layers would need them resident together, above the bound.
      if (vc.offload && cfg_.scenario == "train" && vc.checkpointing.policy != checkpoint_policy::none)
        v.add("checkpointing",
              "not supported with offload in the train scenario: offloading already "
              "recomputes every layer in backward (keeping only the layer inputs)");
      continue;
    }
    if (key == "parallel" && !pending) {
      read_parallel(v.object("parallel"), vc);
      continue;
    }
    if (key == "pipeline" && !pending) {
      read_pipeline(v.object("pipeline"), vc);
      continue;
    }
    if (pending)
      vc.techniques[key] = nlohmann::json(*block);
    else
      v.add(key, fmt::format("technique {} is not available in this version (pending)", quote(key)));
  }
  // A pending variant never runs, so what this machine can run does not constrain it.
  if (pending) return vc;
  if (vc.offload && vc.pipeline)
    v.add("pipeline",
          "not supported together with offload in one variant: a pipeline stage runs its layers "
          "resident on its device");
  if (vc.parallel && vc.pipeline)
    v.add("pipeline", "not supported together with parallel in one variant: use one or the other");
  if (backend) check_backend(v, vc.attention, *backend);
  check_technique_options(v, vc);
  if (vc.precision == precision_kind::amp_fp16 && cfg_.scenario == "train")
    v.add("precision", fp16_training_refusal());
  else if (vc.precision == precision_kind::amp_fp16 && on_cpu_.value_or(false) && !caps_.cpu_amp_fp16)
    v.add("precision", fmt::format("amp-fp16 on the CPU needs a LibTorch whose CPU autocast "
                                   "supports float16 (this one does not); device {} runs on "
                                   "the CPU",
                                   quote(cfg_.device)));
  return vc;
}

// A core precision (autocast), or a value a registered technique adds: the variant then runs
// without autocast and the technique owns it (vc.techniques["precision"]).
void config_reader::read_precision(const object_reader& v, variant_config& vc) {
  const ordered_json* p = v.find("precision");
  if (!p) return;
  if (p->is_string())
    if (const technique_option* o = find_technique_option("precision", p->get<std::string>())) {
      vc.techniques["precision"] = o->value;
      return;
    }
  const auto name = v.choice("precision");
  vc.precision_auto = name && *name == amp_auto_precision;
  for (auto k : all_precisions)
    if (name && to_string(k) == *name) vc.precision = k;
}

// Keys registered techniques add beside "precision" ("linear": "packed"): one of their values.
void config_reader::read_technique_keys(const object_reader& v, variant_config& vc) {
  for (const auto& key : technique_option_keys()) {
    if (key == "precision" || !v.has(key)) continue;
    if (const technique_option* block = chosen_option(key, nlohmann::json::object())) {
      // A block option: an object its technique checks against the run's model.
      const object_reader b = v.object(key);
      if (!b.present()) continue;  // not an object: object() logged it
      bool ok = true;
      for (auto& [sub, message] : block->check_block(*v.find(key), cfg_.model)) {
        log_.add(sub.empty() ? v.path(key) : child_path(v.path(key), sub), std::move(message));
        ok = false;
      }
      if (ok) vc.techniques[key] = nlohmann::json(*v.find(key));
      continue;
    }
    if (auto value = v.choice(key)) vc.techniques[key] = *value;
  }
}

// What a registered technique's value cannot be combined with, as it declared.
void config_reader::check_technique_options(const object_reader& v, const variant_config& vc) {
  std::vector<std::string> chosen;  // "key": "value" of each registered value the variant chose
  std::vector<const technique_option*> options;
  for (const auto& [key, value] : vc.techniques)
    if (const technique_option* o = chosen_option(key, value)) {
      chosen.push_back(value.is_string() ? fmt::format("{}: {}", quote(key), quote(value.get<std::string>()))
                                         : quote(key));
      options.push_back(o);
    }
  if (options.size() > 1 && !owning_option(options)) {
    // What each of them does combine with, so the message says what would work.
    std::vector<std::string> combinable;
    for (const auto* o : options)
      for (const auto& [key, value] : o->combines_with)
        combinable.push_back(
            fmt::format("{} {} with {} {}", quote(o->key), quote(o->value), quote(key), quote(value)));
    v.add(vc.techniques.rbegin()->first,
          fmt::format("one technique per variant: {} are each run by a technique of their own{}", join(chosen),
                      combinable.empty() ? "" : fmt::format(" (combinable: {})", join(combinable))));
  }
  for (const auto& [key, value] : vc.techniques) {
    const technique_option* o = chosen_option(key, value);
    if (!o) continue;
    const std::string what = o->is_block() ? quote(key) : fmt::format("{} {}", quote(key), quote(o->value));
    if (std::find(o->scenarios.begin(), o->scenarios.end(), cfg_.scenario) == o->scenarios.end())
      v.add(key, fmt::format("{} runs in the {} scenario{} only, not in {}", what, join(o->scenarios),
                             o->scenarios.size() == 1 ? "" : "s", quote(cfg_.scenario)));
    const std::map<std::string, bool> present{{"offload", vc.offload.has_value()},
                                              {"parallel", vc.parallel.has_value()},
                                              {"pipeline", vc.pipeline.has_value()},
                                              {"checkpointing", vc.checkpointing.policy != checkpoint_policy::none}};
    for (const auto& block : o->excludes)
      if (auto it = present.find(block); it != present.end() && it->second)
        v.add(key, fmt::format("{} is not supported together with {} in one variant ({})", what, block, o->summary));
    const auto& allowed = o->precisions;
    const std::string precision = vc.precision_auto ? std::string(amp_auto_precision) : to_string(vc.precision);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), precision) == allowed.end())
      v.add(key, fmt::format("{} runs under precision {} only; this variant's precision is {} ({})", what,
                             join(allowed), quote(precision), o->summary));
  }
}

}  // namespace attnbench::config_reading
