#include "techniques/variant_plan.hpp"

#include <stdexcept>

#include "config/technique_catalog.hpp"
#include "techniques/offload_executor.hpp"
#include "techniques/precision.hpp"
#include "techniques/registry.hpp"

namespace attnbench {

std::string dtype_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::BFloat16:
      return "bf16";
    case c10::ScalarType::Half:
      return "fp16";
    case c10::ScalarType::Char:
      return "int8";
    default:
      return "fp32";
  }
}

c10::ScalarType scalar_type_of_name(const std::string& name) {
  if (name == "bf16") return c10::ScalarType::BFloat16;
  if (name == "fp16") return c10::ScalarType::Half;
  if (name == "int8") return c10::ScalarType::Char;
  return c10::ScalarType::Float;
}

resolved_precision core_precision(const config& cfg, const variant_config& v) {
  resolved_precision p;
  const c10::ScalarType dtype = compute_dtype(v.precision);  // the one precision_kind → dtype switch
  p.dtype = dtype_name(dtype);
  p.activations = dtype;
  p.autocast = autocast_dtype(v.precision);
  if (v.precision_auto)  // "amp (bf16)": what "amp" became on this device (techniques/amp_choice.hpp)
    p.label = v.precision_choice.empty() ? "amp (unresolved)" : "amp (" + p.dtype + ")";
  else
    p.label = to_string(v.precision);
  p.tolerance = cfg.check.tolerance.at(v.precision);
  return p;
}

resolved_precision technique_precision(const config& cfg, const std::string& value,
                                       c10::ScalarType activations) {
  const technique_option* o = find_technique_option("precision", value);
  if (!o) throw std::logic_error("technique_precision: no registered \"precision\": \"" + value + "\"");
  resolved_precision p;
  p.label = value;
  p.dtype = value;
  p.activations = activations;
  const auto set = cfg.check.technique_tolerance.find(value);
  p.tolerance = set != cfg.check.technique_tolerance.end() ? set->second : o->default_tolerance;
  return p;
}

variant_plan plan_variant(const config& cfg, const variant_config& v, c10::Device device) {
  variant_plan p;
  p.variant = v.name;
  p.owner = technique_for(v);  // the one catalog search, once per variant
  p.precision = core_precision(cfg, v);
  p.heads = cfg.model.heads;
  p.head_dim = cfg.model.heads > 0 ? cfg.model.hidden / cfg.model.heads : 0;
  if (p.owner) {
    p.owner->plan(cfg, v, device, p);
  } else if (v.offload) {
    p.skip_reason = offload_skip_reason(*v.offload, device);
  } else if (v.parallel && v.parallel->mode == parallel_mode::threads && v.parallel->devices.empty()) {
    p.skip_reason =
        "needs an accelerator: \"devices\": \"all\" means every CUDA device, and this machine has none "
        "(list CPU workers, e.g. [\"cpu\", \"cpu\"], to run on the CPU)";
  }
  return p;
}

std::vector<variant_plan> plan_variants(const config& cfg, c10::Device device) {
  std::vector<variant_plan> plans;
  plans.reserve(cfg.variants.size());
  for (const auto& v : cfg.variants) plans.push_back(plan_variant(cfg, v, device));
  return plans;
}

}  // namespace attnbench
