// Which executor runs a variant: a registered technique's (techniques/registry.hpp), offload,
// pipeline, or the plain one (techniques/plain_executor.hpp), all behind core/executor.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "techniques/plain_executor.hpp"
#include "model/encoder.hpp"
#include "report/result.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {

// Why this variant cannot run here (e.g. offloading without an accelerator), or nullopt. The
// variant is then SKIPPED with the reason in every report: no numbers, not a failure.
std::optional<std::string> executor_skip_reason(const variant_config& variant, torch::Device device);

std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, bool causal);

}  // namespace attnbench
