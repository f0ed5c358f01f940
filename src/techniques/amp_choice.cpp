#include "techniques/amp_choice.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/fp16_training.hpp"
#include "report/ceilings.hpp"

namespace attnbench {
namespace {

// Compute capabilities whose tensor cores first multiplied each dtype (CUDA programming guide).
constexpr int fp16_tensor_cores = 70;  // Volta
constexpr int bf16_tensor_cores = 80;  // Ampere: bf16 and tf32
constexpr int fp8_tensor_cores = 89;   // Ada and Hopper

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// ", measured matmul ceilings bf16 441 and fp32 199 GFLOP/s" or "" when not both measured.
std::string ceilings_text(const environment_info& env, const std::string& reduced) {
  const double r = measured_ceiling(env, reduced), f = measured_ceiling(env, "fp32");
  if (!std::isfinite(r) || !std::isfinite(f)) return " (matmul ceilings not measured in this process)";
  return fmt::format(" (measured matmul ceilings: {} {:.3g}, fp32 {:.3g} GFLOP/s)", reduced, r, f);
}

precision_kind kind_of(const std::string& dtype) {
  return dtype == "bf16" ? precision_kind::amp_bf16 : dtype == "fp16" ? precision_kind::amp_fp16 : precision_kind::fp32;
}

amp_decision chosen(const std::string& dtype, const std::string& why, const environment_info& env) {
  amp_decision d;
  d.precision = kind_of(dtype);
  d.dtype = dtype;
  d.considered = dtype;
  d.reason = fmt::format("precision \"amp\" runs amp-{} here: {}{}", dtype, why, ceilings_text(env, dtype));
  return d;
}

amp_decision declined(const std::string& considered, const std::string& why, const environment_info& env) {
  amp_decision d;
  d.considered = considered;
  d.reason = fmt::format("precision \"amp\" runs fp32 here (no autocast), the same as the fp32 baseline: {}{}",
                         why, ceilings_text(env, considered));
  return d;
}

amp_decision choose_on_cuda(const environment_info& env) {
  const std::vector<std::string> tc = tensor_core_dtypes(env.gpu_capability);
  const std::string gpu = fmt::format("{} (compute capability {})", env.device_name.empty() ? env.device : env.device_name,
                                      env.gpu_capability.empty() ? "unknown" : env.gpu_capability);
  if (has(tc, "bf16")) return chosen("bf16", fmt::format("the tensor cores of {} multiply bf16", gpu), env);
  if (has(tc, "fp16")) return chosen("fp16", fmt::format("the tensor cores of {} multiply fp16, not bf16", gpu), env);
  if (env.gpu_capability.empty())
    return declined("fp16", fmt::format("the compute capability of {} is unknown", env.device), env);
  return declined("fp16", fmt::format("{} has no tensor cores", gpu), env);
}

amp_decision choose_on_cpu(const environment_info& env) {
  const auto& f = env.cpu_features;
  if (env.cpu_id.empty() && f.empty())
    return declined("bf16", "this CPU's features are unknown, so no native reduced precision can be assumed", env);
  if (has(f, "amx_bf16")) return chosen("bf16", "this CPU has amx_bf16", env);
  if (has(f, "avx512_bf16")) return chosen("bf16", "this CPU has avx512_bf16", env);
  if (has(f, "amx_fp16")) return chosen("fp16", "this CPU has amx_fp16 but no native bf16", env);
  if (has(f, "avx512_fp16")) return chosen("fp16", "this CPU has avx512_fp16 but no native bf16", env);
  return declined("bf16",
                  fmt::format("this CPU has no native bf16 or fp16 (features: {}), so LibTorch's reduced-precision "
                              "matmuls would run on a slow path",
                              f.empty() ? "none that matter" : fmt::format("{}", fmt::join(f, " "))),
                  env);
}

}  // namespace

std::vector<std::string> tensor_core_dtypes(const std::string& capability) {
  std::istringstream in(capability);
  int major = 0, minor = 0;
  char dot = 0;
  if (!(in >> major >> dot >> minor) || dot != '.') return {};
  const int cc = major * 10 + minor;
  std::vector<std::string> out;
  if (cc >= fp16_tensor_cores) out.push_back("fp16");
  if (cc >= bf16_tensor_cores) {
    out.push_back("bf16");
    out.push_back("tf32");
  }
  if (cc >= fp8_tensor_cores) out.push_back("fp8");
  return out;
}

amp_decision choose_amp(const environment_info& env) {
  return env.device.rfind("cuda", 0) == 0 ? choose_on_cuda(env) : choose_on_cpu(env);
}

void resolve_amp(config& cfg, const environment_info& env) {
  if (!any_amp(cfg)) return;
  amp_decision d = choose_amp(env);
  if (cfg.scenario == "train" && d.precision == precision_kind::amp_fp16)
    d = declined("fp16", fp16_training_refusal(), env);
  for (auto& v : cfg.variants) {
    if (!v.precision_auto) continue;
    v.precision = d.precision;
    v.precision_choice = d.reason;
  }
}

bool any_amp(const config& cfg) {
  return std::any_of(cfg.variants.begin(), cfg.variants.end(), [](const variant_config& v) { return v.precision_auto; });
}

}  // namespace attnbench
