// Runs an experiment: every variant over the same workload on the same model, warm-up first,
// then timed passes interleaved round-robin (A B C A B C …) so that a drift in the machine's
// speed hits every variant alike, then the output check against the baseline.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/run_observer.hpp"
#include "model/encoder.hpp"
#include "report/result.hpp"

namespace attnbench {

class distributed_world;

struct progress_event {
  std::string phase;    // "check", "warmup", "timed"
  std::string variant;
  int64_t done = 0;     // passes done in this phase, all variants together
  int64_t total = 0;    // passes planned in this phase (timed: the minimum)
  double elapsed_s = 0; // since the run started
};

// Set-up that several runs of one process can share (the points of a sweep): the last model
// built, keyed by its config and device, and the matmul ceilings, keyed by device, threads and
// dtype. Reusing them changes no result: weights come from the seed, and a ceiling is a property
// of the machine.
struct setup_cache {
  std::string model_key;
  EncoderClassifier model{nullptr};  // on the host (runner/model_placement.hpp)
  int64_t model_bytes = -1;          // what building it allocated, measured
  std::map<std::string, matmul_ceiling> ceilings;
  int64_t models_built = 0;  // for tests and the log
};

struct loop_resume;

struct run_options {
  std::function<void(const progress_event&)> on_progress;  // may be empty
  std::function<void(const std::string&)> on_log;          // verbose lines; may be empty
  // Test-only: adds noise to this variant's outputs before the check (proves a FAIL is caught).
  std::optional<std::string> perturb_variant;
  bool measure_ceilings = true;  // off in unit tests to save time
  setup_cache* cache = nullptr;   // may be null: nothing is shared
  // The ranks of a multi-process run (parallel mode "processes"); null in a single process.
  distributed_world* world = nullptr;
  // Told of the run's passes and server requests as they happen (live metrics); may be null.
  run_observer* observer = nullptr;
  // `run --resume`: the rounds to continue and where to save them if stopped again
  // (runner/resume_state.hpp); may be null.
  loop_resume* resume = nullptr;
};

struct run_outcome {
  run_result result;
  std::map<std::string, torch::Tensor> outputs;  // variant name → (N, C) float logits, sample order
};

run_outcome run_experiment(const config& cfg, const run_options& options);

// Every device a variant computes on, canonical and distinct, the run's `device` first: its
// thread workers' and pipeline stages' devices besides the run's.
std::vector<torch::Device> variant_devices(const variant_config& vc, torch::Device device);

// Why one figure cannot be a variant's check-pass peak, or nullopt: it works on devices besides
// the run's (each of them is measured on its own: the peak per device is reported instead).
std::optional<std::string> memory_not_covered(const variant_config& vc, torch::Device device);

}  // namespace attnbench
