#include "runner/variant_traits.hpp"

#include "config/technique_catalog.hpp"
#include "report/ceilings.hpp"
#include "techniques/registry.hpp"

namespace attnbench {

std::string precision_label(const variant_config& v) {
  if (const technique* t = technique_for(v)) return t->precision_label(v);
  if (v.precision_auto)  // "amp (bf16)": what "amp" became on this device (techniques/amp_choice.hpp)
    return v.precision_choice.empty() ? "amp (unresolved)" : "amp (" + compute_dtype_name(v) + ")";
  return to_string(v.precision);
}

double tolerance_for(const config& cfg, const variant_config& v) {
  const auto it = v.techniques.find("precision");
  if (it != v.techniques.end() && it->second.is_string()) {
    const std::string value = it->second.get<std::string>();
    if (const technique_option* o = find_technique_option("precision", value)) {
      const auto set = cfg.check.technique_tolerance.find(value);
      return set != cfg.check.technique_tolerance.end() ? set->second : o->default_tolerance;
    }
  }
  return cfg.check.tolerance.at(v.precision);
}

std::string compute_dtype_name(const variant_config& v) {
  if (const technique* t = technique_for(v)) return t->compute_dtype(v);
  switch (v.precision) {
    case precision_kind::amp_bf16: return "bf16";
    case precision_kind::amp_fp16: return "fp16";
    case precision_kind::fp32: break;
  }
  return "fp32";
}

torch::Dtype compute_scalar_type(const variant_config& v) {
  return scalar_type_of(compute_dtype_name(v));
}

torch::Dtype scalar_type_of(const std::string& dtype_name) {
  return dtype_name == "bf16" ? torch::kBFloat16 : dtype_name == "fp16" ? torch::kHalf : torch::kFloat;
}

double ceiling_for(const environment_info& env, const variant_config& v) {
  return measured_ceiling(env, compute_dtype_name(v));
}

}  // namespace attnbench
