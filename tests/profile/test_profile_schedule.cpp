// The schedule against torch.profiler.schedule's definition, and the calls it implies.
#include <catch2/catch.hpp>

#include <vector>

#include "profile/profile_schedule.hpp"

using namespace attnbench;

namespace {

profile_config schedule_of(int64_t skip_first, int64_t wait, int64_t warmup, int64_t active, int64_t repeat) {
  profile_config c;
  c.skip_first = skip_first;
  c.wait = wait;
  c.warmup = warmup;
  c.active = active;
  c.repeat = repeat;
  return c;
}

}  // namespace

TEST_CASE("schedule: actions follow torch.profiler.schedule", "[profile]") {
  // torch.profiler.schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2), steps 0..9:
  // NONE, NONE, WARMUP, RECORD, RECORD_AND_SAVE, NONE, WARMUP, RECORD, RECORD_AND_SAVE, NONE
  const profile_schedule s(schedule_of(1, 1, 1, 2, 2));
  using a = profiler_action;
  const std::vector<a> want{a::none, a::none,   a::warmup, a::record,          a::record_and_save,
                            a::none, a::warmup, a::record, a::record_and_save, a::none};
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("step " << i);
    CHECK(to_string(s.action(static_cast<int64_t>(i))) == to_string(want[i]));
  }
  CHECK(s.total_steps() == 9);
}

TEST_CASE("schedule: transitions prepare, enable and disable once per cycle", "[profile]") {
  SECTION("with warm-up") {
    const profile_schedule s(schedule_of(0, 1, 1, 2, 2));
    int prepares = 0, enables = 0, disables = 0;
    for (int64_t i = 0; i < s.total_steps(); ++i) {
      const auto t = s.transition(i);
      prepares += t.prepare;
      enables += t.enable;
      disables += t.disable;
      if (t.prepare) CHECK(s.action(i) == profiler_action::warmup);
      if (t.enable) CHECK(s.action(i) == profiler_action::record);
    }
    CHECK(prepares == 2);
    CHECK(enables == 2);
    CHECK(disables == 2);
  }
  SECTION("without warm-up or wait: back-to-back cycles each prepare and enable") {
    const profile_schedule s(schedule_of(0, 0, 0, 1, 3));
    for (int64_t i = 0; i < 3; ++i) {
      const auto t = s.transition(i);
      CHECK(t.prepare);
      CHECK(t.enable);
      CHECK(t.disable);
    }
  }
}

TEST_CASE("schedule: nothing is recorded without active steps", "[profile]") {
  const profile_schedule s(schedule_of(0, 2, 2, 0, 1));
  for (int64_t i = 0; i < 10; ++i) CHECK(s.action(i) == profiler_action::none);
}
