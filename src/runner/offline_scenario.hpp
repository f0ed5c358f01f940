// The offline scenario (MLPerf's "Offline"): a pass runs the whole dataset through the variant's
// executor, batch by batch (or as one whole pass for the techniques that split it among workers
// or ranks), and the check compares each sample's outputs with the baseline's. The server
// scenario runs the same passes and then a rate sweep on each variant that passed
// (runner/server_scenario.hpp). In a multi-process run every rank runs the collective variants
// together, rank 0 runs the others alone, and only rank 0 reports.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "check/output_check.hpp"
#include "config/config.hpp"
#include "model/encoder.hpp"
#include "runner/measurement_loop.hpp"
#include "runner/model_placement.hpp"
#include "runner/planner_calibration.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

class distributed_world;
class torchscript_model;
struct offline_variant;  // a variant's executor, batches and check-pass outputs

// Where the offline scenario runs and what it may consult besides the config.
struct offline_setup {
  torch::Device device{torch::kCPU};
  // The built-in model (on the host, placed on the device when a variant needs it whole), or null …
  std::shared_ptr<model_placement> model;
  std::shared_ptr<torchscript_model> scripted;  // … when a TorchScript module is benchmarked
  distributed_world* world = nullptr;           // the ranks of a multi-process run, or null
  // Test-only: adds noise to this variant's outputs before the check (proves a FAIL is caught).
  std::optional<std::string> perturb_variant;
  loop_progress progress;  // the server sweep reports its points through it
  run_observer* observer = nullptr;  // may be null: told of each served request and batch
};

// What a row's report says when its batches differ from those of `other`, a row that batches
// alike (`batching`, the two rows' batching description): "" when the plans are the same batches
// (sizes and padded lengths, in any order: data-parallel workers deal the same batches out).
std::string plan_difference_note(const std::string& other, const std::string& batching,
                                 const std::vector<batch_plan>& mine, const std::vector<batch_plan>& theirs);

class offline_scenario : public scenario_base {
 public:
  // cfg and data are borrowed and must outlive the scenario; plans: cfg's variants' (plan_variants).
  offline_scenario(const config& cfg, std::vector<variant_plan> plans, const dataset& data,
                   offline_setup setup);
  ~offline_scenario() override;

  std::optional<skip_verdict> skip_reason(std::size_t i, variant_result& r) override;
  void prepare(std::size_t i, variant_result& r) override;
  void check_pass(std::size_t i, variant_result& r) override;
  pass_timing pass(std::size_t i, pass_phase phase) override;
  bool end_of_passes() override;
  check_result check(std::size_t i, std::size_t base, double tolerance, variant_result& r) override;
  void finalize(std::size_t i, std::optional<std::size_t> base, variant_result& r) override;

  const variant_plan& plan(std::size_t i) const { return plans_.at(i); }

  // Variant i's check-pass outputs, (N, C) float in sample order (undefined before its check pass).
  const torch::Tensor& check_outputs(std::size_t i) const;

  // Variant name → (N, C) float logits in sample order, for each variant that ran every pass.
  std::map<std::string, torch::Tensor> take_outputs() { return std::move(outputs_); }

 private:
  bool collective(std::size_t i) const;
  // Variant i's description for the reports (batching: its batching description, or "" before planned).
  std::string describe(std::size_t i, const std::string& batching) const;
  bool needs_whole_model_on_device(std::size_t i) const;
  void serve(std::size_t i, std::size_t base, variant_result& r);
  // The float64 study of a precision class (runner/decision_study.hpp), run once, on first need.
  std::shared_ptr<const decision_evidence> study_for(const std::string& precision_class);

  const config& cfg_;
  std::vector<variant_plan> plans_;
  const dataset& data_;
  offline_setup setup_;
  const variant_config& base_cfg_;
  std::string base_batching_;  // how the baseline batches, for the other variants' descriptions
  std::vector<offline_variant> variants_;
  std::map<std::string, torch::Tensor> outputs_;
  std::map<std::string, std::shared_ptr<const decision_evidence>> studies_;
  // The cost planner's model per precision class ("amp-bf16"), fitted when the first cost-planned
  // variant of that class is prepared: variants that differ in anything else (attention, worker
  // threads) plan the same batches, so a row that changes one setting runs its parent's plan.
  std::map<std::string, planner_calibration> planners_;
  // Every prepared variant's batching and the shape of its plan, to say when two rows that batch
  // alike were handed different plans.
  struct planned {
    std::string name, batching;
    std::vector<batch_plan> plans;
  };
  std::vector<planned> planned_;
};

}  // namespace attnbench
