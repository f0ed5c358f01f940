// A batching policy turns the dataset into the batch plans one pass runs; the input assembler
// turns a plan into tensors. Static and dynamic batching are the two policies.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "workload/batch_plan.hpp"
#include "workload/cost_planner.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

struct batch {
  torch::Tensor input_ids;            // (B, S) int64, on the run's device, padded with [PAD]
  torch::Tensor padding_mask;         // (B, S) bool, true for real tokens
  std::vector<int64_t> sample_index;  // dataset index of each row: outputs go back to sample order
  int64_t real_tokens = 0;
  int64_t padded_length = 0;          // S
};

class batching_base {
 public:
  virtual ~batching_base() = default;
  // Plans over `rows` (dataset indices; all of them, or the unique ones when a cache serves repeats).
  std::vector<batch_plan> plan(const dataset& data, const std::vector<int64_t>& rows) const {
    return do_plan(data, rows);
  }
  virtual std::string describe() const = 0;  // e.g. "static bs=8 pad=max_length"

 protected:
  virtual std::vector<batch_plan> do_plan(const dataset& data, const std::vector<int64_t>& rows) const = 0;
};

// `cost` is what dynamic batching's cost planner minimises (unused by static and greedy batching).
std::unique_ptr<batching_base> make_batching(const batching_config& cfg, int64_t max_length,
                                             const batch_cost_model& cost);

// Lengths of every sample, indexed by dataset row.
std::vector<int64_t> sample_lengths(const dataset& data);

// Builds a batch's tensors: [PAD]-filled ids and a mask, moved to the device. Without pooling
// every batch allocates fresh tensors; with pooling one set per (B, S) shape is allocated once
// and refilled, as a serving system's buffer pool does. Counts the tensors it allocates.
class input_assembler {
 public:
  input_assembler(const dataset& data, torch::Device device, bool pool);
  ~input_assembler();
  input_assembler(const input_assembler&) = delete;
  input_assembler& operator=(const input_assembler&) = delete;
  batch assemble(const batch_plan& plan);
  int64_t allocations() const { return allocations_; }

 private:
  struct pooled;
  const dataset& data_;
  torch::Device device_;
  bool pool_;
  int64_t allocations_ = 0;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<pooled>> buffers_;  // (B, S) → buffers
};

}  // namespace attnbench
