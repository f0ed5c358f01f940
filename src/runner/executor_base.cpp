#include "runner/executor_base.hpp"

#include "techniques/offload_executor.hpp"
#include "techniques/pipeline_executor.hpp"
#include "techniques/registry.hpp"

namespace attnbench {

std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, const variant_plan& plan,
                                             bool causal) {
  if (plan.owner) return plan.owner->make_executor(std::move(model), device, variant, plan, causal);
  if (variant.offload)
    return std::make_unique<offload_executor>(std::move(model), device, variant, plan, causal);
  if (variant.pipeline)
    return std::make_unique<pipeline_executor>(std::move(model), device, variant, plan, causal);
  return std::make_unique<plain_executor>(std::move(model), device, variant, plan, causal);
}

}  // namespace attnbench
