#include "config/cost_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attnbench {
namespace {

// Rates above any device of today, so the time estimate stays a lower bound: per CPU core (an
// AVX-512/AMX core's bf16 peak is a few hundred GFLOP/s) and per CUDA device (an H200's dense
// fp8 peak is about 2 PFLOP/s).
constexpr double cpu_core_peak_flops = 1e12;
constexpr double cuda_device_peak_flops = 4e15;

std::string human(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

std::string duration(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} days", s / 86400);
}

// The shortest a sample can be (1 when the lengths come from a file: unknown before reading it).
double shortest_length(const workload_config& w) {
  if (!w.file.empty() || !w.text.empty()) return 1;
  switch (w.lengths.kind) {
    case length_kind::fixed:
      return static_cast<double>(std::max<int64_t>(w.lengths.length, 1));
    case length_kind::uniform:
    case length_kind::lognormal:
      return static_cast<double>(std::max<int64_t>(w.lengths.min, 1));
    case length_kind::file:
      return 1;
  }
  return 1;
}

}  // namespace

machine_budget this_machine_budget() {
  machine_budget m;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) m.memory_bytes = static_cast<int64_t>(pages) * page;
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpu_cores = cores > 0 ? cores : 1;
  return m;
}

cost_estimate estimate_cost(const config& cfg, const machine_budget& m) {
  cost_estimate e;
  const model_config& mc = cfg.model;
  const double h = static_cast<double>(mc.hidden), ffn = static_cast<double>(mc.ffn),
               layers = static_cast<double>(mc.layers);
  const double layer_weights = layers * (4 * h * h + 2 * h * ffn);
  const double samples = static_cast<double>(cfg.workload.samples);
  const double shortest = shortest_length(cfg.workload);
  const double max_length = static_cast<double>(cfg.workload.max_length);
  // Every sample's token ids (4 bytes each at least), generated before anything runs.
  e.workload_bytes = static_cast<int64_t>(std::min(samples * shortest * 4, 9e18));
  if (mc.torchscript.empty())
    e.weight_bytes = static_cast<int64_t>(
        std::min(4 * (layer_weights + (static_cast<double>(mc.vocab_size) + static_cast<double>(mc.max_positions)) * h),
                 9e18));
  const double per_sample_out = static_cast<double>(mc.num_labels > 0 ? mc.num_labels : mc.hidden);
  double runnable = 0, largest_activation = 0;
  for (const auto& v : cfg.variants) {
    if (v.pending) continue;
    runnable += 1;
    const batching_config& b = v.batching;
    // The largest batch at its smallest: its rows, and its length (max_length when padded to it).
    const double rows = std::min(samples, static_cast<double>(std::max<int64_t>(b.max_batch(), 1)));
    const double length =
        b.kind == "static" && b.padding == padding_kind::max_length ? max_length : std::min(shortest, max_length);
    double act = rows * length * std::max(ffn, h) * 4;  // the feed-forward's widest activation
    if (v.attention == attention_kind::naive)           // the score matrix, materialised
      act += rows * static_cast<double>(mc.heads) * length * length * 4;
    largest_activation = std::max(largest_activation, act);
  }
  e.output_bytes = static_cast<int64_t>(std::min(runnable * samples * per_sample_out * 4, 9e18));
  e.activation_bytes = static_cast<int64_t>(std::min(largest_activation, 9e18));
  // Passes: the check pass, warm-up and the least number of timed rounds, every variant.
  const measure_config& mm = cfg.measure;
  const double rounds = static_cast<double>(mm.adaptive ? mm.min_repetitions : mm.repetitions);
  e.passes = runnable * (1 + static_cast<double>(mm.warmup) + rounds);
  e.flops_per_pass = 2 * layer_weights * samples * shortest * (cfg.scenario == "train" ? 3 : 1);
  const bool cuda = cfg.device.rfind("cuda", 0) == 0;
  e.peak_flops = cuda ? cuda_device_peak_flops : cpu_core_peak_flops * static_cast<double>(m.cpu_cores);
  return e;
}

std::vector<problem> cost_problems(const config& cfg, const machine_budget& m) {
  std::vector<problem> out;
  const cost_estimate e = estimate_cost(cfg, m);
  if (m.memory_bytes > 0 && e.total_bytes() > m.memory_bytes)
    out.push_back({"workload",
                   fmt::format("needs at least {} of memory (token ids {}, fp32 weights {}, outputs kept for the check "
                               "{}, the largest batch's activations {}), more than this machine's {}: make the "
                               "workload, the batches or the model smaller (or pass --no-cost-check)",
                               human(static_cast<double>(e.total_bytes())), human(static_cast<double>(e.workload_bytes)),
                               human(static_cast<double>(e.weight_bytes)), human(static_cast<double>(e.output_bytes)),
                               human(static_cast<double>(e.activation_bytes)),
                               human(static_cast<double>(m.memory_bytes)))});
  const double s = e.seconds();
  if (s > m.max_time_s)
    out.push_back(
        {"measure",
         fmt::format("would run for at least {} ({:.0f} passes × {:.3g} FLOP each at no more than {:.3g} FLOP/s), "
                     "more than the {} a run may take: lower the samples, measure.warmup or the repetitions (or pass "
                     "--no-cost-check)",
                     duration(s), e.passes, e.flops_per_pass, e.peak_flops, duration(m.max_time_s))});
  return out;
}

}  // namespace attnbench
