// The train scenario: every batch of a pass is one forward + backward + AdamW step of the
// classifier on seeded synthetic labels (cross-entropy), so techniques that only matter when
// activations are kept for a backward pass (activation checkpointing) can be measured.
//
// Fairness: each variant trains its own copy of the model, initialised from the same seed, and
// every pass (the untimed check pass, warm-up and timed passes alike) starts from those initial
// weights, a fresh AdamW (empty state) and the same RNG seed for dropout. Every pass therefore
// does exactly the same work from the same state; the reset happens before the clock starts.
// Passes are interleaved round-robin across variants as in the offline scenario.
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

#include <functional>
#include <string>

#include <torch/torch.h>

#include "config/config.hpp"
#include "report/result.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

using train_progress =
    std::function<void(const std::string& phase, const std::string& variant, int64_t done, int64_t total)>;

// Runs every variant of a "train" config on `device` and fills res.variants and res.repetitions.
void run_train_scenario(const config& cfg, const dataset& data, torch::Device device, run_result& res,
                        const train_progress& progress);

}  // namespace attnbench
