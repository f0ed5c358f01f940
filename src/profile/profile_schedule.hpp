// The wait / warmup / active / repeat schedule of torch.profiler.schedule, which LibTorch does
// not ship: what the profiler does at each step, and which calls (prepare, enable, disable) the
// driver makes around a step to follow it.
#pragma once

#include <cstdint>
#include <string>

#include "config/profile_config.hpp"

namespace attnbench {

enum class profiler_action { none, warmup, record, record_and_save };

std::string to_string(profiler_action a);  // "none", "warmup", "record", "record_and_save"

// The calls around one step that move the profiler from the previous step's action to this one's.
struct profiler_transition {
  bool prepare = false;  // before the step: prepareProfiler (warm-up starts, or record without warm-up)
  bool enable = false;   // before the step: enableProfiler (recording starts)
  bool disable = false;  // after the step: disableProfiler, and the cycle's trace is handed on
};

class profile_schedule {
 public:
  explicit profile_schedule(const profile_config& cfg);

  // The action at `step` (0-based), as torch.profiler.schedule(...)(step) returns it.
  profiler_action action(int64_t step) const;
  // Steps the driver runs: skip_first + repeat × (wait + warmup + active). Past them every
  // action is none.
  int64_t total_steps() const;
  // Calls around `step`, given the action of the step before (none before step 0).
  profiler_transition transition(int64_t step) const;

 private:
  profile_config cfg_;
};

}  // namespace attnbench
