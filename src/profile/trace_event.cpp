#include "profile/trace_event.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace attnbench {
namespace {

bool is_interval(const trace_event& e) { return e.kind == event_kind::op || e.kind == event_kind::region; }

}  // namespace

std::vector<int64_t> enclosing_events(const std::vector<trace_event>& events) {
  std::vector<int64_t> parent(events.size(), -1);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (is_interval(events[i]) || events[i].kind == event_kind::memory) order.push_back(i);
  // Per thread by start; at equal starts the longer interval first (it is the parent) and points
  // after intervals (an allocation at an op's first nanosecond belongs to the op).
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const trace_event& x = events[a];
    const trace_event& y = events[b];
    return std::make_tuple(x.thread, x.start_ns, x.kind == event_kind::memory, -x.end_ns, a) <
           std::make_tuple(y.thread, y.start_ns, y.kind == event_kind::memory, -y.end_ns, b);
  });
  std::vector<std::size_t> open;  // intervals containing the current position, innermost last
  uint64_t thread = 0;
  for (std::size_t i : order) {
    const trace_event& e = events[i];
    if (open.empty() || thread != e.thread) {
      open.clear();
      thread = e.thread;
    }
    while (!open.empty() &&
           !(events[open.back()].start_ns <= e.start_ns && e.end_ns <= events[open.back()].end_ns))
      open.pop_back();
    if (!open.empty()) parent[i] = static_cast<int64_t>(open.back());
    if (is_interval(e)) open.push_back(i);
  }
  return parent;
}

std::vector<int64_t> self_times_ns(const std::vector<trace_event>& events,
                                   const std::vector<int64_t>& parents) {
  std::vector<int64_t> self(events.size(), 0);
  for (std::size_t i = 0; i < events.size(); ++i)
    if (is_interval(events[i])) self[i] += events[i].duration_ns();
  for (std::size_t i = 0; i < events.size(); ++i)
    if (is_interval(events[i]) && parents[i] >= 0)
      self[static_cast<std::size_t>(parents[i])] -= events[i].duration_ns();
  return self;
}

int64_t profiler_step_of(const std::string& name) {
  static const std::string prefix = "ProfilerStep#";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return -1;
  int64_t n = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

std::map<int64_t, std::vector<trace_event>> events_by_step(const std::vector<trace_event>& events) {
  const auto parents = enclosing_events(events);
  std::map<int64_t, std::vector<trace_event>> out;
  for (std::size_t i = 0; i < events.size(); ++i)
    for (int64_t p = parents[i]; p >= 0; p = parents[static_cast<std::size_t>(p)]) {
      const trace_event& owner = events[static_cast<std::size_t>(p)];
      if (owner.kind != event_kind::region) continue;
      if (const int64_t step = profiler_step_of(owner.name); step >= 0) {
        out[step].push_back(events[i]);
        break;
      }
    }
  return out;
}

}  // namespace attnbench
