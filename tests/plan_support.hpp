// Tests that build an executor directly plan its variant first, as the runner does
// (techniques/variant_plan.hpp): against the test's config, or alone with the default tolerances.
#pragma once

#include <memory>

#include "config/config_defaults.hpp"
#include "model/encoder.hpp"
#include "runner/executor_base.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench::testing {

// v as the only variant of a config running `model` with every default tolerance.
inline variant_plan plan_alone(const variant_config& v, const model_config& model,
                               torch::Device device = torch::kCPU) {
  config cfg;
  cfg.model = model;
  for (auto p : {precision_kind::fp32, precision_kind::amp_bf16, precision_kind::amp_fp16})
    cfg.check.tolerance[p] = defaults::tolerance(p);
  cfg.variants = {v};
  cfg.baseline = v.name;
  return plan_variant(cfg, v, device);
}

// The executor the runner builds for v (planned alone) on `model`.
inline std::unique_ptr<executor_base> planned_executor(EncoderClassifier model, torch::Device device,
                                                       const variant_config& v, bool causal = false) {
  const variant_plan plan = plan_alone(v, model->config(), device);
  return make_executor(std::move(model), device, v, plan, causal);
}

// The executor for variant v of cfg, planned against cfg.
inline std::unique_ptr<executor_base> planned_executor(EncoderClassifier model, torch::Device device,
                                                       const config& cfg, const variant_config& v,
                                                       bool causal = false) {
  return make_executor(std::move(model), device, v, plan_variant(cfg, v, device), causal);
}

}  // namespace attnbench::testing
