// One seeded batch of three samples for the technique executors' tests, the last `short_row` one
// right-padded to `real` tokens: what the runner hands an executor's forward().
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "workload/batching_base.hpp"

namespace attnbench::testing {

inline batch padded_batch(uint64_t seed, int64_t length, int64_t short_row, int64_t real,
                          torch::Device device = torch::kCPU) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  batch b;
  b.input_ids = at::randint(1000, 30000, {3, length}, gen, torch::kLong);
  b.padding_mask = torch::ones({3, length}, torch::kBool);
  b.padding_mask.index_put_({short_row, torch::indexing::Slice(real, length)}, false);
  b.real_tokens = b.padding_mask.sum().item<int64_t>();
  b.padded_length = length;
  b.sample_index = {0, 1, 2};
  b.input_ids = b.input_ids.to(device);
  b.padding_mask = b.padding_mask.to(device);
  return b;
}

}  // namespace attnbench::testing
