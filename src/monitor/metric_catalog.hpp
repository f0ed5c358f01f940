// Every metric attnbench exports, in one table: its name (Prometheus' conventions: base units,
// `_total` for counters, `_seconds`, `_bytes`, `_ratio`), type, help text and labels. The
// exporter registers series only from this table, and the Grafana dashboard's test checks every
// query against it, so neither can name a metric the other does not know.
#pragma once

#include <string>
#include <vector>

#include "monitor/metrics_registry.hpp"

namespace attnbench {

struct metric_spec {
  const char* name;
  metric_type type;
  const char* help;
  const char* labels;  // the labels its series carry, for the documentation ("" for none)
};

namespace exported {
// The run: labels run (the config's name), and rank on a rank of `attnbench launch`.
inline const metric_spec phase{"attnbench_phase", metric_type::gauge,
                               "1 for the phase the run is in (check, warmup, timed, server, done), 0 for the others",
                               "run, variant, phase"};
inline const metric_spec phase_progress{"attnbench_phase_progress_ratio", metric_type::gauge,
                                        "Passes done in the current phase over those planned", "run"};
inline const metric_spec timed_round{"attnbench_timed_round", metric_type::gauge,
                                     "The timed pass being run, all variants together (1-based)", "run"};
inline const metric_spec timed_rounds_planned{"attnbench_timed_rounds_planned", metric_type::gauge,
                                              "Timed passes planned, all variants together (the minimum)", "run"};
// Per variant: labels run, variant.
inline const metric_spec samples{"attnbench_samples_total", metric_type::counter,
                                 "Samples processed by warm-up and timed passes", "run, variant"};
inline const metric_spec tokens{"attnbench_tokens_total", metric_type::counter,
                                "Real (unpadded) tokens processed by warm-up and timed passes", "run, variant"};
inline const metric_spec throughput{"attnbench_throughput_samples_per_second", metric_type::gauge,
                                    "Samples per second of the variant's last timed pass", "run, variant"};
inline const metric_spec batch_latency{"attnbench_batch_latency_seconds", metric_type::histogram,
                                       "Latency of each batch (training: step) of the timed passes",
                                       "run, variant"};
inline const metric_spec cache_hit{"attnbench_cache_hit_ratio", metric_type::gauge,
                                   "Share of samples (offline passes) or requests (server) the result cache answers", "run, variant"};
inline const metric_spec check_peak_memory{"attnbench_check_peak_memory_bytes", metric_type::gauge,
                                           "Peak memory of the variant's check pass on the run's device",
                                           "run, variant"};
// The server scenario: labels run, variant.
inline const metric_spec offered_rate{"attnbench_server_offered_rate_requests_per_second", metric_type::gauge,
                                      "The offered request rate being served", "run, variant"};
inline const metric_spec requests{"attnbench_server_requests_total", metric_type::counter,
                                  "Requests served, all offered rates together", "run, variant"};
inline const metric_spec request_latency{"attnbench_request_latency_seconds", metric_type::histogram,
                                         "Request latency, arrival to completion (queueing and compute)",
                                         "run, variant"};
inline const metric_spec queue_depth{"attnbench_server_queue_depth", metric_type::gauge,
                                     "Requests waiting when the last batch was formed", "run, variant"};
inline const metric_spec mean_batch{"attnbench_server_mean_batch_size", metric_type::gauge,
                                    "Mean requests per batch at the current offered rate", "run, variant"};
// The process and its devices.
inline const metric_spec cpu_seconds{"process_cpu_seconds_total", metric_type::counter,
                                     "User and system CPU time of the process, in seconds", ""};
inline const metric_spec resident{"process_resident_memory_bytes", metric_type::gauge,
                                  "Resident memory of the process", ""};
inline const metric_spec device_allocated{"attnbench_device_memory_allocated_bytes", metric_type::gauge,
                                          "Device memory held by tensors (CUDA caching allocator)", "device"};
inline const metric_spec device_reserved{"attnbench_device_memory_reserved_bytes", metric_type::gauge,
                                         "Device memory reserved by the CUDA caching allocator", "device"};
inline const metric_spec gpu_util{"attnbench_gpu_utilization_ratio", metric_type::gauge,
                                  "Share of the last NVML sample period a kernel ran on the GPU", "gpu"};
inline const metric_spec gpu_mem_busy{"attnbench_gpu_memory_busy_ratio", metric_type::gauge,
                                      "Share of the last NVML sample period device memory was read or written",
                                      "gpu"};
inline const metric_spec gpu_power{"attnbench_gpu_power_watts", metric_type::gauge, "GPU power draw (NVML)", "gpu"};
inline const metric_spec gpu_temp{"attnbench_gpu_temperature_celsius", metric_type::gauge,
                                  "GPU core temperature (NVML)", "gpu"};
inline const metric_spec gpu_mem_used{"attnbench_gpu_memory_used_bytes", metric_type::gauge,
                                      "Device memory in use on the GPU, every process (NVML)", "gpu"};
}  // namespace exported

// The table above, in order.
const std::vector<const metric_spec*>& metric_catalog();

}  // namespace attnbench
