// LibTorch's Kineto profiler (torch/csrc/autograd/profiler_kineto.h) behind three calls the
// schedule drives: prepare (warm-up: the profiler is set up but records nothing), enable
// (recording starts) and disable (recording stops; the cycle's result is returned).
//
// Profiling is per thread: only work started on the calling thread is recorded (LibTorch's
// intra-op workers run inside the ops that started them, so their time is inside those ops).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/autograd/profiler_kineto.h>

#include "config/profile_config.hpp"
#include "profile/trace_event.hpp"

namespace attnbench {

// One recorded cycle: its events for the analyses, and the result that writes the Chrome trace.
struct profiled_cycle {
  std::vector<trace_event> events;
  std::unique_ptr<torch::autograd::profiler::ProfilerResult> result;
  void save_trace(const std::string& path) const;  // Chrome trace JSON (Perfetto, chrome://tracing)
};

class kineto_session {
 public:
  // `cuda`: also record CUDA activity (kernels, copies) through CUPTI.
  kineto_session(const profile_config& cfg, bool cuda);
  ~kineto_session();  // stops a recording still running (an exception mid-cycle)
  kineto_session(const kineto_session&) = delete;
  kineto_session& operator=(const kineto_session&) = delete;

  void prepare();
  void enable();
  profiled_cycle disable();
  bool recording() const { return recording_; }

 private:
  torch::profiler::impl::ProfilerConfig config_;
  std::set<torch::profiler::impl::ActivityType> activities_;
  bool recording_ = false;
};

// The events of a Kineto result as the analyses see them.
std::vector<trace_event> to_trace_events(const torch::autograd::profiler::ProfilerResult& result);

}  // namespace attnbench
