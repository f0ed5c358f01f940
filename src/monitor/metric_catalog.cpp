#include "monitor/metric_catalog.hpp"

namespace attnbench {

const std::vector<const metric_spec*>& metric_catalog() {
  using namespace exported;
  static const std::vector<const metric_spec*> all{
      &phase,          &phase_progress,   &timed_round,     &timed_rounds_planned, &samples,       &tokens,
      &throughput,     &batch_latency,    &cache_hit,       &check_peak_memory,    &offered_rate,  &requests,
      &request_latency, &queue_depth,     &mean_batch,      &cpu_seconds,          &resident,      &device_allocated,
      &device_reserved, &gpu_util,        &gpu_mem_busy,    &gpu_power,            &gpu_temp,      &gpu_mem_used};
  return all;
}

}  // namespace attnbench
