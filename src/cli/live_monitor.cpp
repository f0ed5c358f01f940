#include "cli/live_monitor.hpp"

#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include <fmt/format.h>

#if ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "common/error.hpp"
#include "monitor/event_file_writer.hpp"
#include "monitor/metric_catalog.hpp"
#include "monitor/metrics_server.hpp"
#include "monitor/nvml_probe.hpp"
#include "monitor/process_stats.hpp"
#include "report/file_output.hpp"
#include "runner/runner.hpp"

namespace attnbench {
namespace {

constexpr int max_port = 65535;

// A series of a catalogued metric: the exporter names nothing the catalog does not hold.
metric_counter& counter(metrics_registry& r, const metric_spec& m, const metric_labels& l) {
  return r.counter(m.name, m.help, l);
}
metric_gauge& gauge(metrics_registry& r, const metric_spec& m, const metric_labels& l) {
  return r.gauge(m.name, m.help, l);
}
metric_histogram& histogram(metrics_registry& r, const metric_spec& m, const metric_labels& l) {
  return r.histogram(m.name, m.help, l);
}

void collect_process(metrics_registry& r) {
  if (const auto p = read_process_stats()) {
    counter(r, exported::cpu_seconds, {}).set(p->cpu_seconds);
    gauge(r, exported::resident, {}).set(p->resident_bytes);
  }
}

void collect_gpus(metrics_registry& r, const nvml_probe& nvml) {
  for (const gpu_sample& s : nvml.sample()) {
    const metric_labels l{{"gpu", std::to_string(s.index)}};
    const auto put = [&](const metric_spec& m, double v) {
      if (v >= 0) gauge(r, m, l).set(v);  // a reading the board refuses stays absent
    };
    put(exported::gpu_util, s.utilization_ratio);
    put(exported::gpu_mem_busy, s.memory_busy_ratio);
    put(exported::gpu_power, s.power_watts);
    put(exported::gpu_temp, s.temperature_celsius);
    put(exported::gpu_mem_used, s.memory_used_bytes);
  }
}

#if ATTNBENCH_WITH_CUDA
// The caching allocator's figures for the run's device, the calls runner/memory_tracker.cpp makes.
void collect_device_memory(metrics_registry& r, int index) {
  using namespace c10::cuda::CUDACachingAllocator;
  const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  const auto stats = getDeviceStats(static_cast<c10::DeviceIndex>(index));
  const metric_labels l{{"device", fmt::format("cuda:{}", index)}};
  gauge(r, exported::device_allocated, l).set(static_cast<double>(stats.allocated_bytes[agg].current));
  gauge(r, exported::device_reserved, l).set(static_cast<double>(stats.reserved_bytes[agg].current));
}
#endif

}  // namespace

void add_monitor_options(CLI::App& cmd, monitor_options& opts, bool tensorboard) {
  if (tensorboard)
    cmd.add_option("--tensorboard", opts.tensorboard,
                   "Write TensorBoard scalars (throughput per timed pass, memory, latency per offered rate, "
                   "training loss) to DIR/tensorboard/<variant>/, beside the profiler's traces");
  cmd.add_option("--metrics-port", opts.metrics_port,
                 "Serve live Prometheus metrics at http://ADDR:PORT/metrics while the run lasts, and write "
                 "metrics.prom beside the reports (launch: rank r serves on PORT + r)")
      ->check(CLI::Range(1, max_port));
  cmd.add_option("--metrics-address", opts.metrics_address, "Address the metrics endpoint listens on")
      ->capture_default_str();
  cmd.add_option("--metrics-hold-s", opts.metrics_hold_s,
                 "Keep serving the final metrics this many seconds after the run ends")
      ->check(CLI::Range(0.0, 86400.0));
}

std::vector<std::string> monitor_arguments(const monitor_options& opts, int rank) {
  if (!opts.enabled()) return {};
  if (opts.metrics_port + rank > max_port)
    throw input_error("--metrics-port", fmt::format("rank {} would serve on port {}, above {}", rank,
                                                    opts.metrics_port + rank, max_port));
  return {"--metrics-port", std::to_string(opts.metrics_port + rank), "--metrics-address", opts.metrics_address,
          "--metrics-hold-s", fmt::format("{}", opts.metrics_hold_s)};
}

namespace {

// A variant's name as a folder name, as the profiler's TensorBoard runs are named.
std::string folder_name(std::string name) {
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  return name;
}

}  // namespace

event_file_writer* live_monitor::board(const std::string& variant) {
  if (opts_.tensorboard.empty()) return nullptr;
  auto& b = boards_[variant];
  if (!b) {
    try {
      b = std::make_unique<event_file_writer>(
          std::filesystem::path(opts_.tensorboard) / "tensorboard" / folder_name(variant), "--tensorboard");
    } catch (const std::exception&) {
      return nullptr;  // an observer never fails the run; the folder was checked before it began
    }
  }
  return b.get();
}

live_monitor::live_monitor(const monitor_options& opts, const std::string& run_name, std::optional<int> rank)
    : opts_(opts), run_name_(run_name), rank_(rank) {
  if (!opts.tensorboard.empty()) {  // refused before the run when the folder cannot be made
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(opts.tensorboard) / "tensorboard", ec);
    if (ec) throw input_error("--tensorboard", fmt::format("cannot create {}/tensorboard: {}", opts.tensorboard,
                                                           ec.message()));
  }
  if (!opts.enabled()) return;
  registry_ = std::make_unique<metrics_registry>();
  registry_->add_collector(collect_process);
  nvml_ = nvml_probe::open();
  if (nvml_) registry_->add_collector([probe = nvml_.get()](metrics_registry& r) { collect_gpus(r, *probe); });
#if ATTNBENCH_WITH_CUDA
  // Read only once a check pass ran there: the allocator of a device the run has not used yet
  // is not set up.
  registry_->add_collector([this](metrics_registry& r) {
    if (const int d = cuda_device_.load(); d >= 0 && device_used_.load()) collect_device_memory(r, d);
  });
#endif
  set_phase("setup", "");
  server_ = std::make_unique<metrics_server>(*registry_, opts.metrics_address, opts.metrics_port, "--metrics-port");
}

live_monitor::~live_monitor() = default;

std::string live_monitor::endpoint() const {
  return server_ ? fmt::format("http://{}:{}/metrics", server_->address(), server_->port()) : "";
}

metric_labels live_monitor::labels(const std::string& variant) const {
  metric_labels l{{"run", run_name_}};
  if (rank_) l.emplace_back("rank", std::to_string(*rank_));
  if (!variant.empty()) l.emplace_back("variant", variant);
  return l;
}

void live_monitor::set_phase(const std::string& phase, const std::string& variant) {
  const std::string key = phase + '\n' + variant;
  if (key == phase_key_) return;
  phase_key_ = key;
  metric_labels l = labels(variant);
  if (variant.empty()) l.emplace_back("variant", "");
  l.emplace_back("phase", phase);
  metric_gauge& now = gauge(*registry_, exported::phase, l);
  if (phase_now_ && phase_now_ != &now) phase_now_->set(0);
  now.set(1);
  phase_now_ = &now;
}

void live_monitor::on_progress(const progress_event& e) {
  if (!registry_) return;
  // The server reports "<variant> @ <rate> req/s" as its variant: the phase names the variant alone.
  const auto at = e.variant.find(" @ ");
  set_phase(e.phase, at == std::string::npos ? e.variant : e.variant.substr(0, at));
  const metric_labels run = labels("");
  gauge(*registry_, exported::phase_progress, run)
      .set(e.total > 0 ? static_cast<double>(e.done) / static_cast<double>(e.total) : 0);
  if (e.phase == "timed") {
    gauge(*registry_, exported::timed_round, run).set(static_cast<double>(e.done + 1));
    gauge(*registry_, exported::timed_rounds_planned, run).set(static_cast<double>(e.total));
  }
}

double live_monitor::last_throughput(const std::string& variant) const {
  const std::lock_guard<std::mutex> lock(throughput_mutex_);
  const auto it = throughput_.find(variant);
  return it == throughput_.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

void live_monitor::on_variant_ready(const std::string& variant, double cache_hit_ratio, double peak_memory_bytes) {
  if (auto* b = board(variant); b && peak_memory_bytes >= 0) b->add_scalar("memory/check_peak_bytes", peak_memory_bytes, 0);
  if (!registry_) return;
  device_used_ = true;
  const metric_labels l = labels(variant);
  if (cache_hit_ratio >= 0) gauge(*registry_, exported::cache_hit, l).set(cache_hit_ratio);
  if (peak_memory_bytes >= 0) gauge(*registry_, exported::check_peak_memory, l).set(peak_memory_bytes);
}

void live_monitor::on_pass(const std::string& variant, bool timed, int64_t samples, int64_t tokens, double seconds,
                           const std::vector<double>& unit_ms) {
  if (timed && seconds > 0) {
    const std::lock_guard<std::mutex> lock(throughput_mutex_);
    throughput_[variant] = static_cast<double>(samples) / seconds;
  }
  if (auto* b = board(variant); b && timed && seconds > 0) {
    const int64_t step = timed_steps_[variant]++;
    b->add_scalar("throughput/samples_per_s", static_cast<double>(samples) / seconds, step);
    b->add_scalar("throughput/tokens_per_s", static_cast<double>(tokens) / seconds, step);
    if (const auto p = read_process_stats()) b->add_scalar("memory/process_resident_bytes", p->resident_bytes, step);
  }
  if (!registry_) return;
  const metric_labels l = labels(variant);
  counter(*registry_, exported::samples, l).inc(static_cast<double>(samples));
  counter(*registry_, exported::tokens, l).inc(static_cast<double>(tokens));
  if (!timed) return;
  if (seconds > 0) gauge(*registry_, exported::throughput, l).set(static_cast<double>(samples) / seconds);
  metric_histogram& h = histogram(*registry_, exported::batch_latency, l);
  for (double ms : unit_ms) h.observe(ms / 1e3);
}

void live_monitor::on_server_rate(const std::string& variant, double offered_rate) {
  if (!registry_) return;
  rate_batches_ = rate_requests_ = 0;
  if (variant != server_variant_) server_requests_ = server_cached_ = 0;
  server_variant_ = variant;
  const metric_labels l = labels(variant);
  gauge(*registry_, exported::offered_rate, l).set(offered_rate);
  queue_depth_ = &gauge(*registry_, exported::queue_depth, l);
  mean_batch_ = &gauge(*registry_, exported::mean_batch, l);
  requests_ = &counter(*registry_, exported::requests, l);
  request_latency_ = &histogram(*registry_, exported::request_latency, l);
  cache_hit_ = nullptr;  // registered at the first hit: a variant without a cache has none
}

void live_monitor::on_server_batch(const std::string& /*variant*/, int64_t batch_size, int64_t queue_depth) {
  if (!registry_ || !queue_depth_) return;  // the series of the rate on_server_rate announced
  ++rate_batches_;
  rate_requests_ += batch_size;
  queue_depth_->set(static_cast<double>(queue_depth));
  mean_batch_->set(static_cast<double>(rate_requests_) / static_cast<double>(rate_batches_));
}

void live_monitor::on_server_request(const std::string& variant, double latency_s, bool cached) {
  if (!registry_ || !requests_) return;
  requests_->inc();
  request_latency_->observe(latency_s);
  ++server_requests_;
  if (cached) ++server_cached_;
  if (server_cached_ == 0) return;
  if (!cache_hit_) cache_hit_ = &gauge(*registry_, exported::cache_hit, labels(variant));
  cache_hit_->set(static_cast<double>(server_cached_) / static_cast<double>(server_requests_));
}

void live_monitor::on_train_losses(const std::string& variant, const std::vector<double>& losses) {
  if (auto* b = board(variant))
    for (std::size_t k = 0; k < losses.size(); ++k) b->add_scalar("train/loss", losses[k], static_cast<int64_t>(k));
}

void live_monitor::on_server_point(const std::string& variant, double offered_rate, double p50_ms, double p90_ms,
                                   double p99_ms, double achieved_rate) {
  auto* b = board(variant);
  if (!b) return;
  // TensorBoard's step is an integer: the offered rate in requests/s (a trace: the point's index).
  const int64_t index = server_points_[variant]++;
  const int64_t step = std::isnan(offered_rate) ? index : std::llround(offered_rate);
  b->add_scalar("server/p50_ms", p50_ms, step);
  b->add_scalar("server/p90_ms", p90_ms, step);
  b->add_scalar("server/p99_ms", p99_ms, step);
  b->add_scalar("server/achieved_rate", achieved_rate, step);
}

std::string live_monitor::render() { return registry_ ? registry_->render() : ""; }

void live_monitor::finish(const std::filesystem::path& file) {
  if (!registry_) return;
  set_phase("done", "");
  std::filesystem::create_directories(file.parent_path());
  write_file_atomic(file, registry_->render());
  if (opts_.metrics_hold_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(opts_.metrics_hold_s));
}

}  // namespace attnbench
