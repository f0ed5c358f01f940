// A variant resolved once: who runs it, at what precision, against which tolerance, what it does
// differently, whether it can run here, and the shape its FLOPs are counted on. plan_variants
// builds one per variant right after "amp" is resolved (runner/runner.cpp); the measurement loop,
// the scenarios, the executors and the reports read the plan and never ask the config again.
//
// A registered technique (techniques/registry.hpp) owns the variants that chose one of its
// catalog values: the planner starts from the core precision and the full model, and the owner
// changes what it changes (its own precision, its description, its skip reason, its heads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "config/config.hpp"

namespace attnbench {

class technique;

struct resolved_precision {
  // The precision column of every report: "fp32", "amp-bf16", "amp (bf16)" (what "amp" became
  // here), or a technique's own ("bf16", "int8").
  std::string label = "fp32";
  // The matmuls' dtype: "fp32", "bf16", "fp16" or "int8". It names the measured ceiling the
  // variant is compared with and its precision class (common/precision_classes.hpp).
  std::string dtype = "fp32";
  // The dtype activations (and so attention's inputs) flow in: fp32 for int8 linears.
  c10::ScalarType activations = c10::ScalarType::Float;
  // The dtype autocast runs in, or none (fp32, and a cast or quantized copy of the model).
  std::optional<c10::ScalarType> autocast;
  // The relative-L2 bound the variant's outputs must meet against the baseline's, fixed before the run.
  double tolerance = 0;
};

struct variant_plan {
  std::string variant;               // the variant's name
  const technique* owner = nullptr;  // the registered technique that runs it, or null (built-in executors)
  resolved_precision precision;
  std::string description;  // what the owner does differently from the baseline; "" for built-ins
  std::optional<std::string> skip_reason;  // why it cannot run on the run's device (SKIPPED), or none
  int64_t heads = 0;                       // attention heads per layer its model runs (model/flops.hpp)
  int64_t head_dim = 0;
};

// The precision the variant's "precision" names as LibTorch runs it (fp32, amp-bf16, amp-fp16, or
// what "amp" became), with the run's tolerance for it (check.tolerances).
resolved_precision core_precision(const config& cfg, const variant_config& v);

// A registered technique's own "precision" value ("bf16", "int8"): label and dtype are the value,
// the tolerance is check.tolerances[value] where set, else the catalog's default for it. No autocast.
resolved_precision technique_precision(const config& cfg, const std::string& value,
                                       c10::ScalarType activations);

// Variant v of cfg on `device`, and every variant of cfg in its order. cfg's "amp" must be resolved
// (techniques/amp_choice.hpp) for an "amp" variant's dtype to be known.
variant_plan plan_variant(const config& cfg, const variant_config& v, c10::Device device);
std::vector<variant_plan> plan_variants(const config& cfg, c10::Device device);

// The dtype's name as plans and reports write it (fp32, bf16, fp16, int8), and back.
std::string dtype_name(c10::ScalarType dtype);
c10::ScalarType scalar_type_of_name(const std::string& name);

}  // namespace attnbench
