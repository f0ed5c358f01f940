// One profiler event as the analyses see it: a plain record, free of LibTorch, so the operator
// table and the attention breakdown can be tested on events written by hand. kineto_session
// converts the Kineto profiler's events into these.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnbench {

enum class event_kind {
  op,      // a LibTorch operator on the host (aten::mm, ...): an interval
  region,  // a labelled region (RECORD_USER_SCOPE), the step markers included: an interval
  memory,  // an allocation (+bytes) or free (−bytes): a point in time
  device,  // a GPU kernel, copy or set, linked to the host op that launched it
  other,   // runtime calls and everything else: ignored by the analyses
};

struct trace_event {
  std::string name;
  event_kind kind = event_kind::other;
  uint64_t thread = 0;  // host thread id (intervals nest only within a thread)
  int64_t start_ns = 0;
  int64_t end_ns = 0;               // == start_ns for memory events
  int64_t bytes = 0;                // memory: signed size
  bool on_gpu = false;              // memory and device events: the memory or work is on a GPU
  uint64_t correlation = 0;         // op: its correlation id
  uint64_t linked_correlation = 0;  // device: the correlation id of the op that launched it

  int64_t duration_ns() const { return end_ns - start_ns; }
};

// For every event, the index of the innermost op or region on the same thread whose interval
// contains it (its parent), or -1. Device and other events get -1. Intervals of one thread nest
// (RecordFunction scopes are stack-ordered); where two merely overlap the later one is not taken
// as the child.
std::vector<int64_t> enclosing_events(const std::vector<trace_event>& events);

// Time of each op or region not spent in an op or region nested inside it: duration minus its
// direct children's durations (0 for other kinds).
std::vector<int64_t> self_times_ns(const std::vector<trace_event>& events,
                                   const std::vector<int64_t>& parents);

// The step a "ProfilerStep#N" region marks (N), or -1 for any other name.
int64_t profiler_step_of(const std::string& name);

// The events inside each step marker, by the step's number: what one recorded step did.
// Events outside every marker are dropped.
std::map<int64_t, std::vector<trace_event>> events_by_step(const std::vector<trace_event>& events);

}  // namespace attnbench
