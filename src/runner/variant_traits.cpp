#include "runner/variant_traits.hpp"

namespace attnbench {

std::string precision_label(const variant_config& v) { return to_string(v.precision); }

double tolerance_for(const config& cfg, const variant_config& v) { return cfg.check.tolerance.at(v.precision); }

std::string compute_dtype_name(const variant_config& v) {
  switch (v.precision) {
    case precision_kind::amp_bf16: return "bf16";
    case precision_kind::amp_fp16: return "fp16";
    case precision_kind::fp32: break;
  }
  return "fp32";
}

double ceiling_for(const environment_info& env, const variant_config& v) {
  const std::string want = compute_dtype_name(v);
  for (const auto& c : env.ceilings)
    if (c.dtype == want) return c.gflops;
  return not_a_number;
}

}  // namespace attnbench
