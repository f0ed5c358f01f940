// Running a forward again, exactly, for a backward pass: what activation checkpointing and the
// offloaded training layers (offload_trainer) share. A recompute usually runs on the autograd
// engine's thread after the forward's autocast scope has closed and after later layers have drawn
// dropout masks, so the forward captures a recompute_point and the recompute re-enters it:
//   - autocast: the forward's state on its device type (enabled, dtype);
//   - dropout: the default CPU generator's state (and the CUDA one's on a CUDA device), restored
//     for the recompute and put back afterwards, so later draws are as without the recompute.
#pragma once

#include <optional>

#include <torch/torch.h>

#include "techniques/precision.hpp"

namespace attnbench {

// The default generators' states: what dropout draws from.
struct rng_snapshot {
  torch::Tensor cpu;
  std::optional<torch::Tensor> cuda;
  c10::DeviceIndex cuda_index = 0;
};

struct recompute_point {
  torch::Device device = torch::kCPU;
  autocast_state autocast;
  rng_snapshot rng;
};

// Taken just before the forward that will be recomputed, on the thread that runs it.
recompute_point capture_recompute_point(torch::Device device);

// While it lives: the point's generator states, its autocast state, grad mode on. On exit the
// generators, autocast and grad mode are put back as they were.
class recompute_scope {
 public:
  explicit recompute_scope(const recompute_point& point);
  ~recompute_scope();
  recompute_scope(const recompute_scope&) = delete;
  recompute_scope& operator=(const recompute_scope&) = delete;

 private:
  rng_snapshot current_;
  autocast_state_scope autocast_;
  torch::AutoGradMode grad_on_{true};
};

// Autocast caches low-precision copies of fp32 leaf weights while nested. A copy made in a
// no-grad forward carries no graph, and a copy of a buffer that is refilled with another layer's
// weights (offload slots) is stale: forwards that run such weights cache nothing while this lives.
// Partly defensive: with LibTorch 2.11 on the CPU, the checkpointing tests also pass without it.
class autocast_cache_off {
 public:
  autocast_cache_off();
  ~autocast_cache_off();
  autocast_cache_off(const autocast_cache_off&) = delete;
  autocast_cache_off& operator=(const autocast_cache_off&) = delete;

 private:
  bool previous_;
};

}  // namespace attnbench
