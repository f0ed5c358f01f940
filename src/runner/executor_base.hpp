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
#include "model/encoder.hpp"
#include "report/result.hpp"
#include "techniques/plain_executor.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {

// The variant's executor, as its plan says (techniques/variant_plan.hpp): the owning registered
// technique's, then the built-in ones from its technique blocks. Why it cannot run here is the
// plan's skip_reason, asked before this.
std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, const variant_plan& plan,
                                             bool causal);

}  // namespace attnbench
