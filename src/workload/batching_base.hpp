// A batching policy turns the dataset into the batches one pass runs. Static batching is the
// foundation's; dynamic batching plugs in as another policy behind the same interface.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
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
  std::vector<batch> make_batches(const dataset& data, torch::Device device) const {
    return do_make_batches(data, device);
  }
  virtual std::string describe() const = 0;  // e.g. "static bs=8 pad=max_length"

 protected:
  virtual std::vector<batch> do_make_batches(const dataset& data, torch::Device device) const = 0;
};

std::unique_ptr<batching_base> make_batching(const batching_config& cfg, int64_t max_length);

// Pads `rows` (dataset indices) to `padded_length` and moves the tensors to `device`.
batch pack_batch(const dataset& data, std::vector<int64_t> rows, int64_t padded_length, torch::Device device);

}  // namespace attnbench
