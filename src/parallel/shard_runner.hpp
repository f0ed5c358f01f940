// One data-parallel worker's share of a pass: its batches, its model replica, its timing. The
// thread-parallel executor runs one per worker thread; a rank of a multi-process run runs one.
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/encoder.hpp"
#include "techniques/plain_executor.hpp"
#include "workload/batch_plan.hpp"
#include "workload/batching_base.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

class shard_runner {
 public:
  // `plans` are this worker's batches (over its shard's rows). Inputs are built once here on
  // `device`, unless `assemble_inputs`, when each pass builds them as a serving path would.
  shard_runner(EncoderClassifier replica, torch::Device device, const variant_config& variant,
               const variant_plan& plan, bool causal, const dataset& data, std::vector<batch_plan> plans,
               bool assemble_inputs);
  ~shard_runner();
  shard_runner(const shard_runner&) = delete;
  shard_runner& operator=(const shard_runner&) = delete;

  // Runs every batch of the shard on the calling thread (under inference mode, on this worker's
  // own CUDA stream) and waits for the device. seconds: from the first batch's start to the end.
  whole_pass run(bool keep_outputs);

  torch::Device device() const { return device_; }
  const std::vector<batch_plan>& plans() const { return plans_; }

 private:
  struct cuda_state;
  torch::Device device_;
  std::vector<batch_plan> plans_;
  std::vector<batch> prebuilt_;
  std::unique_ptr<input_assembler> assembler_;
  plain_executor executor_;
  std::unique_ptr<cuda_state> cuda_;
};

}  // namespace attnbench
