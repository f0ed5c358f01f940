// The `profile` block of an experiment config: how `attnbench profile` (and `run --profile`)
// drives LibTorch's Kineto profiler. The schedule follows torch.profiler.schedule: after
// `skip_first` steps, `repeat` cycles of `wait` idle steps, `warmup` steps with the profiler
// prepared but not recording, and `active` recorded steps. A step is one forward pass over one
// batch of the variant's batch plan (batches are reused round-robin when there are fewer).
#pragma once

#include <cstdint>

#include "config/config.hpp"

namespace attnbench {

struct profile_config {
  int64_t skip_first = 0;
  int64_t wait = 0;
  int64_t warmup = 0;
  int64_t active = 0;  // ≥ 1: a schedule that records nothing is rejected
  int64_t repeat = 0;  // ≥ 1: cycles; each one is its own trace
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_flops = false;
  bool with_stack = false;
  int64_t top = 0;  // operators listed in the operator table
};

// The `profile` block of a parsed config (defaults where absent; config_defaults.hpp). The
// parser has validated it with the rest of the config, so this throws only for a config that
// did not come from the parser (input_error, with paths).
profile_config profile_config_of(const config& cfg);

}  // namespace attnbench
