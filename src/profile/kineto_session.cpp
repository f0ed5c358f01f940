#include "profile/kineto_session.hpp"

#include <ATen/record_function.h>
#include <kineto/ActivityType.h>

namespace attnbench {
namespace {

namespace prof = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

// LibTorch names allocation and free events so (torch/csrc/autograd/profiler_kineto.cpp).
constexpr const char* memory_event_name = "[memory]";

event_kind kind_of(const prof::KinetoEvent& e) {
  if (e.name() == memory_event_name) return event_kind::memory;
  switch (static_cast<libkineto::ActivityType>(e.activityType())) {
    case libkineto::ActivityType::CPU_OP:
      return e.scope() == static_cast<uint8_t>(at::RecordScope::USER_SCOPE) ? event_kind::region
                                                                            : event_kind::op;
    case libkineto::ActivityType::USER_ANNOTATION:
      return event_kind::region;
    case libkineto::ActivityType::CONCURRENT_KERNEL:
    case libkineto::ActivityType::GPU_MEMCPY:
    case libkineto::ActivityType::GPU_MEMSET:
      return event_kind::device;
    default:
      return event_kind::other;
  }
}

}  // namespace

void profiled_cycle::save_trace(const std::string& path) const { result->save(path); }

kineto_session::kineto_session(const profile_config& cfg, bool cuda)
    : config_(impl::ProfilerState::KINETO, /*report_input_shapes=*/cfg.record_shapes,
              /*profile_memory=*/cfg.profile_memory, /*with_stack=*/cfg.with_stack,
              /*with_flops=*/cfg.with_flops,
              /*with_modules=*/false),
      activities_{impl::ActivityType::CPU} {
  if (cuda) activities_.insert(impl::ActivityType::CUDA);
}

kineto_session::~kineto_session() {
  if (recording_) prof::disableProfiler();
}

void kineto_session::prepare() { prof::prepareProfiler(config_, activities_); }

void kineto_session::enable() {
  prof::enableProfiler(config_, activities_);
  recording_ = true;
}

profiled_cycle kineto_session::disable() {
  recording_ = false;
  profiled_cycle c;
  c.result = prof::disableProfiler();
  c.events = to_trace_events(*c.result);
  return c;
}

std::vector<trace_event> to_trace_events(const prof::ProfilerResult& result) {
  std::vector<trace_event> out;
  out.reserve(result.events().size());
  for (const auto& e : result.events()) {
    trace_event t;
    t.kind = kind_of(e);
    if (t.kind == event_kind::other) continue;
    t.name = e.name();
    t.thread = e.startThreadId();
    t.start_ns = static_cast<int64_t>(e.startNs());
    t.end_ns = t.kind == event_kind::memory ? t.start_ns : static_cast<int64_t>(e.endNs());
    t.bytes = t.kind == event_kind::memory ? e.nBytes() : 0;
    t.on_gpu = e.deviceType() == c10::DeviceType::CUDA;
    t.correlation = e.correlationId();
    t.linked_correlation = e.linkedCorrelationId();
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace attnbench
