// Nesting and self time on events written by hand.
#include <catch2/catch.hpp>

#include "profile/trace_event.hpp"

using namespace attnbench;

namespace {

trace_event interval(const std::string& name, event_kind kind, int64_t start, int64_t end,
                     uint64_t thread = 1) {
  trace_event e;
  e.name = name;
  e.kind = kind;
  e.start_ns = start;
  e.end_ns = end;
  e.thread = thread;
  return e;
}

trace_event alloc(int64_t at, int64_t bytes, uint64_t thread = 1) {
  trace_event e = interval("[memory]", event_kind::memory, at, at, thread);
  e.bytes = bytes;
  return e;
}

}  // namespace

TEST_CASE("trace events: parents are the innermost enclosing interval of the same thread", "[profile]") {
  const std::vector<trace_event> ev{
      interval("region", event_kind::region, 0, 100),
      interval("aten::linear", event_kind::op, 10, 60),
      interval("aten::addmm", event_kind::op, 20, 50),
      alloc(25, 64),
      interval("aten::softmax", event_kind::op, 70, 90),
      interval("other-thread", event_kind::op, 20, 30, 2),
      alloc(95, -64),
  };
  const auto parent = enclosing_events(ev);
  CHECK(parent[0] == -1);
  CHECK(parent[1] == 0);
  CHECK(parent[2] == 1);
  CHECK(parent[3] == 2);
  CHECK(parent[4] == 0);
  CHECK(parent[5] == -1);
  CHECK(parent[6] == 0);
  const auto self = self_times_ns(ev, parent);
  CHECK(self[0] == 100 - 50 - 20);
  CHECK(self[1] == 50 - 30);
  CHECK(self[2] == 30);
  CHECK(self[4] == 20);
  CHECK(self[3] == 0);
}

TEST_CASE("trace events: split by the step markers that contain them", "[profile]") {
  const std::vector<trace_event> ev{
      interval("ProfilerStep#2", event_kind::region, 0, 100),
      interval("aten::mm", event_kind::op, 10, 20),
      interval("ProfilerStep#3", event_kind::region, 200, 300),
      interval("aten::mm", event_kind::op, 210, 220),
      alloc(215, 8),
      interval("aten::mm", event_kind::op, 400, 410),
  };
  CHECK(profiler_step_of("ProfilerStep#17") == 17);
  CHECK(profiler_step_of("ProfilerStep#") == -1);
  CHECK(profiler_step_of("encoder.layer") == -1);
  const auto steps = events_by_step(ev);
  REQUIRE(steps.size() == 2);
  CHECK(steps.at(2).size() == 1);
  CHECK(steps.at(3).size() == 2);
  CHECK(steps.at(3)[1].kind == event_kind::memory);
}
