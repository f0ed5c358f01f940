#include "runner/executor_base.hpp"

#include "techniques/offload_executor.hpp"
#include "techniques/pipeline_executor.hpp"
#include "techniques/registry.hpp"

namespace attnbench {

std::optional<std::string> executor_skip_reason(const variant_config& variant, torch::Device device) {
  if (const technique* t = technique_for(variant)) return t->skip_reason(variant, device);
  if (variant.offload) return offload_skip_reason(*variant.offload, device);
  if (variant.parallel && variant.parallel->mode == parallel_mode::threads && variant.parallel->devices.empty())
    return std::string("needs an accelerator: \"devices\": \"all\" means every CUDA device, and this machine "
                       "has none (list CPU workers, e.g. [\"cpu\", \"cpu\"], to run on the CPU)");
  return std::nullopt;
}

std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, bool causal) {
  // Technique executors are chosen here: a registered technique that owns the variant first, then
  // the built-in ones from the variant's technique blocks.
  if (const technique* t = technique_for(variant)) return t->make_executor(std::move(model), device, variant, causal);
  if (variant.offload) return std::make_unique<offload_executor>(std::move(model), device, variant, causal);
  if (variant.pipeline) return std::make_unique<pipeline_executor>(std::move(model), device, variant, causal);
  return std::make_unique<plain_executor>(std::move(model), device, variant, causal);
}

}  // namespace attnbench
