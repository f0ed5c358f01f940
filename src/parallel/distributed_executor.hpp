// Data parallelism across the ranks of a multi-process run (parallel mode "processes"): every
// rank computes the same FLOP-balanced split of the pass's batches and runs its own shard on its
// own device; timings and outputs are all-gathered, so rank 0 can check them and write the reports.
// A timed pass is: meet, barrier, this rank's shard, barrier; its time is the slowest rank's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "model/encoder.hpp"
#include "parallel/distributed_world.hpp"
#include "parallel/shard_runner.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/batching_base.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

class distributed_executor : public executor_base {
 public:
  // `model` lives on the run's device; a rank whose device differs (cuda:LOCAL_RANK) gets a replica.
  distributed_executor(distributed_world& world, const EncoderClassifier& model, torch::Device run_device,
                       const variant_config& variant, const variant_plan& plan, bool causal,
                       const dataset& data, const std::vector<int64_t>& rows, const batching_base& batching,
                       bool assemble_inputs);
  ~distributed_executor() override;

  bool runs_whole_passes() const override { return true; }
  std::vector<batch_plan> plans() const { return all_plans_; }  // every rank's batches, rank by rank
  static torch::Device rank_device(const distributed_world& world, torch::Device run_device);

 protected:
  torch::Tensor do_forward(const batch& b) override;
  whole_pass do_run_pass(bool keep_outputs) override;
  void do_annotate(variant_result& r) override;

 private:
  distributed_world& world_;
  std::string name_;
  int64_t threads_ = 0;  // intra-op threads while this variant runs (0: the rank's own)
  std::unique_ptr<shard_runner> shard_;
  std::vector<batch_plan> all_plans_;
  std::vector<std::vector<int64_t>> order_;  // per rank: the sample index of each output row
  std::vector<int64_t> samples_, tokens_, batches_;  // per rank
  std::vector<std::vector<double>> rank_s_;          // per rank: busy time of each timed pass
  std::vector<int64_t> rank_threads_;                // per rank, as reported
  int64_t passes_ = 0;
};

}  // namespace attnbench
