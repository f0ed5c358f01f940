// The techniques that plug in through the open path: each is one file in src/techniques/ that
// registers its config values (config/technique_catalog.hpp) and, here, how to run a variant that
// chose one. The runner asks the registry before its built-in executors; reports learn about the
// technique only from the metrics it adds (report/metric.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/encoder.hpp"

namespace attnbench {

class technique {
 public:
  virtual ~technique() = default;
  // The name its catalog entries give (technique_option::technique), e.g. "cast-precision".
  virtual std::string name() const = 0;
  // The precision label reports show ("bf16"), and the dtype of its matmuls ("bf16", "fp16",
  // "fp32"): the ceiling its GFLOP/s are compared with.
  virtual std::string precision_label(const variant_config& v) const = 0;
  virtual std::string compute_dtype(const variant_config& v) const = 0;
  // What the variant does differently from the baseline, for its description.
  virtual std::string describe(const variant_config& v) const = 0;
  // Why it cannot run on `device` (SKIPPED with the reason), or nullopt.
  virtual std::optional<std::string> skip_reason(const variant_config& /*v*/, torch::Device /*device*/) const {
    return std::nullopt;
  }
  // Attention heads per layer its executor's model lacks against the run's `m`, for the FLOP
  // count (model/flops.hpp): 0 unless the technique removes some (techniques/head_pruning.cpp).
  virtual int64_t pruned_heads(const variant_config& /*v*/, const model_config& /*m*/) const { return 0; }
  // Its executor over the run's model (shared with every variant: the technique must not change it).
  virtual std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                                       const variant_config& v, bool causal) const = 0;
};

// Called from a static initializer of the technique's file.
void register_technique(std::unique_ptr<technique> t);

// The registered technique that owns the variant (through a catalog value it chose), or null.
const technique* technique_for(const variant_config& v);

}  // namespace attnbench
