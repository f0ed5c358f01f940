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
#include "techniques/variant_plan.hpp"

namespace attnbench {

class technique {
 public:
  virtual ~technique() = default;
  // The name its catalog entries give (technique_option::technique), e.g. "cast-precision".
  virtual std::string name() const = 0;
  // Fills in what it changes of the plan of a variant it owns (techniques/variant_plan.hpp). The
  // planner starts `p` from the core precision with the run's tolerance, the full model's heads and
  // no skip reason; the technique sets its own precision where it has one (technique_precision),
  // its description (what it does differently from the baseline), why it cannot run on `device`,
  // and the heads its model runs where it removes some (techniques/head_pruning.cpp).
  virtual void plan(const config& cfg, const variant_config& v, torch::Device device,
                    variant_plan& p) const = 0;
  // Its executor over the run's model (shared with every variant: the technique must not change it).
  virtual std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                                       const variant_config& v, const variant_plan& p,
                                                       bool causal) const = 0;
};

// Called from a static initializer of the technique's file.
void register_technique(std::unique_ptr<technique> t);

// The registered technique that owns the variant (through a catalog value it chose), or null: a
// catalog search, asked once per variant by plan_variant; everything after reads variant_plan::owner.
const technique* technique_for(const variant_config& v);

}  // namespace attnbench
