// The train scenario: every batch of a pass is one forward + backward + AdamW step of the
// classifier on seeded synthetic labels (cross-entropy), so techniques that only matter when
// activations are kept for a backward pass (activation checkpointing) can be measured.
//
// Fairness: each variant trains its own copy of the model, initialised from the same seed, and
// every pass (the untimed check pass, warm-up and timed passes alike) starts from those initial
// weights, a fresh AdamW (empty state) and the same RNG seed for dropout. Every pass therefore
// does exactly the same work from the same state; the reset happens before the clock starts.
// The measurement loop (runner/measurement_loop.hpp) interleaves the passes across variants, as
// for every scenario.
//
// Check: after the check pass's steps, each variant's per-step losses, last-step gradients and
// updated weights are compared with the baseline's (relative L2 against the precision's
// tolerance): PASS/FAIL as in inference.
//
// Memory: gradients are allocated before the measured pass (zeroed, not freed, between steps) so
// a step's allocations above its starting level are activations and backward temporaries; the
// activation peak is the highest of those over the steps. Weights, gradients and AdamW state are
// reported from the tensors themselves.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "report/result.hpp"
#include "runner/measurement_loop.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

struct train_variant;  // a variant's own model, optimizer, batches and check-pass results

class train_scenario : public scenario_base {
 public:
  // cfg and data are borrowed and must outlive the scenario; plans: cfg's variants' (plan_variants).
  train_scenario(const config& cfg, std::vector<variant_plan> plans, const dataset& data,
                 torch::Device device);
  ~train_scenario() override;

  std::optional<skip_verdict> skip_reason(std::size_t i, variant_result& r) override;
  void prepare(std::size_t i, variant_result& r) override;
  void check_pass(std::size_t i, variant_result& r) override;
  pass_timing pass(std::size_t i, pass_phase phase) override;
  check_result check(std::size_t i, std::size_t base, double tolerance, variant_result& r) override;
  void finalize(std::size_t i, std::optional<std::size_t> base, variant_result& r) override;

 private:
  // Autograd on while the scenario lives: the caller runs inference under InferenceMode.
  const c10::InferenceMode training_{/*enabled=*/false};
  const config& cfg_;
  std::vector<variant_plan> plans_;
  const dataset& data_;
  torch::Device device_;
  torch::Tensor labels_;  // (N) int64: seeded synthetic labels, one per sample, independent of batching
  std::vector<train_variant> variants_;
};

}  // namespace attnbench
