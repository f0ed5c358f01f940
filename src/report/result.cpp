#include "report/result.hpp"

#include <cmath>

#include "report/ceilings.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace attnbench {

const char* const top1_rule_text =
    "a changed prediction (a to b) passes only when the float64 reference's margin s(a) - s(b) is within the "
    "largest shift of that margin over K runs of the reference with weights and activations rounded at random "
    "at the variant's precision (evidence independent of the variant's output); every other change FAILs, and "
    "without a float64 study every change FAILs";

std::string prediction_text(output_kind kind) {
  return kind == output_kind::embedding ? "nearest neighbour by cosine among the other samples" : "top-1 class";
}

std::string status_text(status_kind status, const check_result& c) {
  std::string text = to_string(status);
  if (status == status_kind::pass && c.random_weights) text += " (numerical check, random weights)";
  return text;
}

bool has_prediction_count(const check_result& c) {
  return c.status != status_kind::skipped && c.samples > 0;
}

std::string predictions_kept_text(const check_result& c) {
  if (!has_prediction_count(c)) return "n/a";
  std::string text = fmt::format("{} of {}", c.predictions_kept, c.samples);
  if (c.exempt_flips > 0) text += fmt::format(" ({} excused by the float64 study)", c.exempt_flips);
  return text;
}

std::string to_string(status_kind s) {
  switch (s) {
    case status_kind::pass:
      return "PASS";
    case status_kind::fail:
      return "FAIL";
    case status_kind::skipped:
      return "SKIPPED";
    case status_kind::oom:
      return "OOM";
    case status_kind::timeout:
      return "TIMEOUT";
  }
  return "UNKNOWN";  // unreachable for valid enum values; keeps -Wreturn-type quiet
}

std::string to_string(output_kind k) {
  switch (k) {
    case output_kind::logits:
      return "logits";
    case output_kind::embedding:
      return "embedding";
  }
  return "unknown";  // unreachable for valid enum values
}

std::string compute_dtype_of_label(const std::string& precision) {
  // "amp (bf16)": precision "amp" as resolved on the run's device
  const std::string amp_prefix = "amp (";
  if (precision.rfind(amp_prefix, 0) == 0 && precision.size() > amp_prefix.size() && precision.back() == ')')
    return precision.substr(amp_prefix.size(), precision.size() - amp_prefix.size() - 1);
  if (precision == "fp32") return "fp32";
  if (precision == "amp-bf16" || precision == "bf16") return "bf16";
  if (precision == "amp-fp16" || precision == "fp16") return "fp16";
  return "";
}

double measured_ceiling(const environment_info& env, const std::string& dtype) {
  for (const auto& c : env.ceilings)
    if (c.dtype == dtype && std::isfinite(c.gflops) && c.gflops > 0) return c.gflops;
  return not_a_number;
}

bool hit_limit(status_kind s) { return s == status_kind::oom || s == status_kind::timeout; }

bool run_result::any_limit_hit() const {
  return std::any_of(variants.begin(), variants.end(), [](const variant_result& v) { return hit_limit(v.status); });
}

bool run_result::all_passed() const {
  return std::none_of(variants.begin(), variants.end(),
                      [](const variant_result& v) { return v.status == status_kind::fail; });
}

}  // namespace attnbench
