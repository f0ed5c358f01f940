#include "runner/planner_calibration.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "config/config_defaults.hpp"
#include "core/device.hpp"
#include "report/metric.hpp"
#include "model/flops.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {
namespace {

// Timed calls per shape after one untimed one; the best counts: on a shared machine the minimum
// is the figure least disturbed by other work.
constexpr int calibration_repeats = 5;
constexpr double not_measured = std::numeric_limits<double>::quiet_NaN();
constexpr const char* source_name = "cost-planner";

// One forward of `rows` copies of `sample` through `exec`: the batch, built once.
batch calibration_batch(torch::Device device, const std::vector<int64_t>& sample, int64_t rows) {
  const auto s = static_cast<int64_t>(sample.size());
  batch b;
  auto one = torch::tensor(sample, torch::kLong).view({1, s});       // (1, S)
  b.input_ids = one.expand({rows, s}).contiguous().to(device);       // (B, S)
  b.padding_mask = torch::ones({rows, s}, torch::kBool).to(device);  // (B, S): every token real
  b.sample_index.assign(static_cast<std::size_t>(rows), 0);
  b.real_tokens = rows * s;
  b.padded_length = s;
  return b;
}

double forward_s(executor_base& exec, torch::Device device, const batch& b) {
  const auto t0 = std::chrono::steady_clock::now();
  exec.forward(b);
  synchronize(device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

planner_calibration fallback(const model_config& m, const std::string& why) {
  planner_calibration c = default_planner_calibration(m);
  c.method = fmt::format("default ({}): {}", defaults::planner_batch_overhead_tokens, why);
  return c;
}

}  // namespace

overhead_fit fit_overhead(double one_row_s, double full_s, int64_t rows, double row_units) {
  overhead_fit f;
  const auto timings = [&] { return fmt::format("1 row {:.3f} ms, {} rows {:.3f} ms", one_row_s * 1e3, rows, full_s * 1e3); };
  const double row_s = (full_s - one_row_s) / static_cast<double>(rows - 1);
  if (!(rows > 1) || !(row_s > 0) || !(row_units > 0)) {
    f.rejected = fmt::format("{} rows timed no slower than 1 (too noisy to fit; {})", rows, timings());
    return f;
  }
  f.token_s = row_s / row_units;
  // No intercept means the full batch cost more than linearly (caches) or the timings were
  // disturbed; an overhead of 0 would cut one batch per length, so the default is safer.
  f.overhead_s = one_row_s - row_s;
  if (!(f.overhead_s > 0)) {
    f.rejected = fmt::format("the fit found no per-batch overhead ({})", timings());
    return f;
  }
  f.per_batch = f.overhead_s / f.token_s;
  // A batch that costs more than the work of all its rows: measured on a quiet 2-core machine the
  // fit is 41–64 token-equivalents against ~2800 for a full batch; under a concurrent build it
  // once gave ~3800, which would plan batches as greedily as possible.
  if (f.per_batch > static_cast<double>(rows) * row_units) {
    f.rejected = fmt::format("the fitted overhead, {:.0f} token-equivalents, exceeds the full batch's own work ({:.0f}): "
                             "the timing was disturbed ({})",
                             f.per_batch, static_cast<double>(rows) * row_units, timings());
    return f;
  }
  return f;
}

planner_calibration default_planner_calibration(const model_config& m) {
  planner_calibration c;
  c.model = batch_cost_model_of(m, defaults::planner_batch_overhead_tokens);
  c.overhead_ms = not_measured;
  c.token_ms = not_measured;
  c.method = "default: not calibrated in this scenario";
  return c;
}

planner_calibration calibrate_planner(executor_base& exec, const std::string& setting, torch::Device device,
                                      const model_config& m, const dataset& data, const batching_config& bc) {
  if (data.samples.empty()) return fallback(m, "no samples");
  // A sample of the median length: the shape a typical batch has.
  std::vector<std::size_t> by_length(data.samples.size());
  for (std::size_t i = 0; i < by_length.size(); ++i) by_length[i] = i;
  const auto mid = by_length.begin() + static_cast<std::ptrdiff_t>(by_length.size() / 2);
  std::nth_element(by_length.begin(), mid, by_length.end(), [&](std::size_t a, std::size_t b) {
    return data.samples[a].size() < data.samples[b].size();
  });
  const std::vector<int64_t>& sample = data.samples[*mid];
  const auto s = static_cast<int64_t>(sample.size());
  // The full batch: as many rows of that length as the limits allow.
  const int64_t rows = std::min(bc.max_batch_size, std::max<int64_t>(1, bc.max_tokens / s));
  if (rows < 2) return fallback(m, "the limits allow one row per batch: nothing to fit");

  // The two shapes alternate, so a drift in the machine's speed hits both alike; the best of
  // each counts. One untimed call each first: first-call costs stay out.
  const batch one = calibration_batch(device, sample, 1), full = calibration_batch(device, sample, rows);
  forward_s(exec, device, one);
  forward_s(exec, device, full);
  double t1 = std::numeric_limits<double>::infinity(), tn = t1;
  for (int r = 0; r < calibration_repeats; ++r) {
    t1 = std::min(t1, forward_s(exec, device, one));
    tn = std::min(tn, forward_s(exec, device, full));
  }
  planner_calibration c;
  c.model = batch_cost_model_of(m, 0);
  const overhead_fit fit = fit_overhead(t1, tn, rows, c.model.cost(1, s) - c.model.per_batch);
  if (!fit.rejected.empty()) return fallback(m, fit.rejected);
  c.model.per_batch = fit.per_batch;
  c.overhead_ms = fit.overhead_s * 1e3;
  c.token_ms = fit.token_s * 1e3;
  c.method = fmt::format(
      "fitted: {} forward of 1 and of {} rows x {} tokens, best of {} each ({:.3f} and {:.3f} ms)", setting,
      rows, s, calibration_repeats, t1 * 1e3, tn * 1e3);
  return c;
}

void annotate_planner(const planner_calibration& c, variant_result& r) {
  set_metric(
      r.metrics,
      {"planner_batch_overhead", c.model.per_batch, "token-equivalents", metric_direction::neither,
       source_name, "per-batch overhead the cost planner assumed (one token through the linear layers = 1)",
       c.method});
  set_metric(
      r.metrics,
      {"planner_batch_overhead_ms", c.overhead_ms, metric_unit::ms, metric_direction::neither, source_name,
       "per-batch overhead the cost planner fitted, in time", std::isnan(c.overhead_ms) ? c.method : ""});
  r.notes.push_back(fmt::format(
      "cost planner: per batch {:.0f} token-equivalents{}, attention {:.3g} per token² (from the FLOP "
      "count); {}",
      c.model.per_batch, std::isnan(c.overhead_ms) ? "" : fmt::format(" ({:.3f} ms)", c.overhead_ms),
      c.model.attention, c.method));
}

}  // namespace attnbench
