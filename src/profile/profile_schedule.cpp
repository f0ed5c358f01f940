#include "profile/profile_schedule.hpp"

namespace attnbench {

std::string to_string(profiler_action a) {
  switch (a) {
    case profiler_action::warmup:
      return "warmup";
    case profiler_action::record:
      return "record";
    case profiler_action::record_and_save:
      return "record_and_save";
    case profiler_action::none:
      break;
  }
  return "none";
}

profile_schedule::profile_schedule(const profile_config& cfg) : cfg_(cfg) {}

profiler_action profile_schedule::action(int64_t step) const {
  if (step < cfg_.skip_first) return profiler_action::none;
  step -= cfg_.skip_first;
  const int64_t cycle = cfg_.wait + cfg_.warmup + cfg_.active;
  if (cycle <= 0 || cfg_.active <= 0 || step / cycle >= cfg_.repeat) return profiler_action::none;
  const int64_t at = step % cycle;
  if (at < cfg_.wait) return profiler_action::none;
  if (at < cfg_.wait + cfg_.warmup) return profiler_action::warmup;
  return at < cycle - 1 ? profiler_action::record : profiler_action::record_and_save;
}

int64_t profile_schedule::total_steps() const {
  return cfg_.skip_first + cfg_.repeat * (cfg_.wait + cfg_.warmup + cfg_.active);
}

profiler_transition profile_schedule::transition(int64_t step) const {
  const profiler_action before = step > 0 ? action(step - 1) : profiler_action::none;
  const profiler_action now = action(step);
  const bool was_prepared = before == profiler_action::warmup;
  const bool was_recording = before == profiler_action::record;  // record_and_save ended its cycle
  const bool records = now == profiler_action::record || now == profiler_action::record_and_save;
  profiler_transition t;
  t.prepare =
      (now == profiler_action::warmup && !was_prepared) || (records && !was_prepared && !was_recording);
  t.enable = records && !was_recording;
  t.disable = now == profiler_action::record_and_save;
  return t;
}

}  // namespace attnbench
