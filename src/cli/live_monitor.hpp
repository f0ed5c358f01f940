// Live monitoring of a run (README "Live monitoring"): the --metrics-* options of `run`, `profile`
// and `launch`, and the observer that turns the run's events into Prometheus metrics served at
// /metrics while the run lasts, then written as metrics.prom beside the reports.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/run_observer.hpp"
#include "monitor/metrics_registry.hpp"

namespace attnbench {

class event_file_writer;
class metrics_server;
class nvml_probe;
struct progress_event;

struct monitor_options {
  int metrics_port = 0;  // 0: no endpoint
  std::string metrics_address = "127.0.0.1";
  double metrics_hold_s = 0;  // keep serving this long after the run ends
  std::string tensorboard;    // --tensorboard DIR: scalars in DIR/tensorboard/<variant>/; "" for none
  bool enabled() const { return metrics_port > 0; }
};

// Adds --metrics-port, --metrics-address and --metrics-hold-s to a subcommand, and --tensorboard
// where `tensorboard` (the subcommands that run the measurement loop).
void add_monitor_options(CLI::App& cmd, monitor_options& opts, bool tensorboard);
// The options as arguments for a rank of `attnbench launch`: its port is PORT + rank.
std::vector<std::string> monitor_arguments(const monitor_options& opts, int rank);

class live_monitor : public run_observer {
 public:
  // Starts serving /metrics when opts.enabled() (throws input_error naming --metrics-port when the
  // port cannot be had); otherwise records nothing and serves nothing. rank: on a rank of a
  // multi-process run, labels every series.
  live_monitor(const monitor_options& opts, const std::string& run_name, std::optional<int> rank);
  ~live_monitor() override;

  bool enabled() const { return registry_ != nullptr; }
  // The CUDA device the run computes on (its caching allocator's memory is exported).
  void watch_cuda_device(int index) { cuda_device_ = index; }
  // The address it serves, for the log ("" when disabled).
  std::string endpoint() const;

  // The run's progress (phase, variant, pass k of n): the phase gauge.
  void on_progress(const progress_event& e);
  // The variant's last timed pass's samples per second, NaN before one.
  double last_throughput(const std::string& variant) const;

  void on_variant_ready(const std::string& variant, double cache_hit_ratio, double peak_memory_bytes) override;
  void on_train_losses(const std::string& variant, const std::vector<double>& losses) override;
  void on_server_point(const std::string& variant, double offered_rate, double p50_ms, double p90_ms, double p99_ms,
                       double achieved_rate) override;
  void on_pass(const std::string& variant, bool timed, int64_t samples, int64_t tokens, double seconds,
               const std::vector<double>& unit_ms) override;
  void on_server_rate(const std::string& variant, double offered_rate) override;
  void on_server_batch(const std::string& variant, int64_t batch_size, int64_t queue_depth) override;
  void on_server_request(const std::string& variant, double latency_s, bool cached) override;

  // The run is over: phase "done", final values to `file` (atomically), then serves them
  // metrics_hold_s more seconds. No-op when disabled.
  void finish(const std::filesystem::path& file);
  // What a scrape returns now ("" when disabled).
  std::string render();

 private:
  metric_labels labels(const std::string& variant) const;
  // The variant's TensorBoard events file, or null without --tensorboard.
  event_file_writer* board(const std::string& variant);
  void set_phase(const std::string& phase, const std::string& variant);

  monitor_options opts_;
  std::string run_name_;
  std::optional<int> rank_;
  std::unique_ptr<metrics_registry> registry_;
  std::unique_ptr<nvml_probe> nvml_;
  std::unique_ptr<metrics_server> server_;
  // The phase series now at 1, and the throughput shown on the progress line.
  metric_gauge* phase_now_ = nullptr;
  std::string phase_key_;
  // The server scenario's batches at the current rate, for the mean batch size.
  int64_t rate_batches_ = 0, rate_requests_ = 0, server_requests_ = 0, server_cached_ = 0;
  std::string server_variant_;
  // The series of the variant being served, looked up once per rate: a request or a batch then
  // costs a few atomic updates, no lookup by labels.
  metric_gauge *queue_depth_ = nullptr, *mean_batch_ = nullptr, *cache_hit_ = nullptr;
  metric_counter* requests_ = nullptr;
  metric_histogram* request_latency_ = nullptr;
  std::atomic<int> cuda_device_{-1};
  std::atomic<bool> device_used_{false};
  mutable std::mutex throughput_mutex_;
  std::map<std::string, double> throughput_;
  std::map<std::string, std::unique_ptr<event_file_writer>> boards_;
  std::map<std::string, int64_t> timed_steps_, server_points_;  // per variant
};

}  // namespace attnbench
