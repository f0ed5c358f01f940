#include "report/svg_writer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "report/svg_chart.hpp"

namespace attnbench {
namespace {

// The bar's label, and whatever stands in for a missing bar.
chart_bar bar_of(const variant_result& v) {
  chart_bar b;
  b.label = v.name;
  b.failed = v.status == status_kind::fail;
  if (v.status == status_kind::skipped) b.note = "skipped" + (v.reason.empty() ? "" : ": " + v.reason);
  if (hit_limit(v.status)) b.note = to_string(v.status) + (v.reason.empty() ? "" : ": " + v.reason);
  return b;
}

bar_panel throughput_panel(const run_result& r) {
  bar_panel p;
  p.title = "Throughput: geometric mean, whisker = its 95% CI";
  p.axis_label = "samples/s";
  for (const auto& v : r.variants) {
    chart_bar b = bar_of(v);
    if (v.status != status_kind::skipped && !hit_limit(v.status)) {
      b.value = v.throughput.geomean;
      b.error_low = v.throughput.geomean_ci_low;
      b.error_high = v.throughput.geomean_ci_high;
      b.value_text = fmt::format("{:.2f}", v.throughput.geomean);
      if (!std::isfinite(b.value)) b.note = "not measured";
      if (b.failed) b.note = "(FAIL)";  // the outputs differ: a speed not to be read as a result
    }
    p.bars.push_back(std::move(b));
  }
  return p;
}

bar_panel speedup_panel(const run_result& r) {
  bar_panel p;
  p.title = "Speedup over " + r.baseline + ": geometric mean of per-round ratios, whisker = its 95% CI";
  p.axis_label = "× baseline";
  p.reference = 1;
  for (const auto& v : r.variants) {
    chart_bar b = bar_of(v);
    if (v.status != status_kind::skipped && !hit_limit(v.status)) {
      b.value = v.is_baseline ? 1.0 : v.speedup.geomean;
      if (!v.is_baseline) {
        b.error_low = v.speedup.geomean_ci_low;
        b.error_high = v.speedup.geomean_ci_high;
      }
      b.value_text = fmt::format("{:.2f}×", b.value) + (v.is_baseline ? " (baseline)" : "");
      if (!std::isfinite(b.value)) b.note = "not measured";
      if (b.failed) b.note = "(FAIL)";  // the outputs differ: a speed not to be read as a result
    }
    p.bars.push_back(std::move(b));
  }
  return p;
}

}  // namespace

void svg_writer::do_write(const run_result& r, std::ostream& out) const {
  const std::string title =
      fmt::format("{} — {}{}", r.name, r.environment.device.empty() ? "unknown device" : r.environment.device,
                  r.environment.device_name.empty() ? "" : " (" + r.environment.device_name + ")");
  out << svg_bar_chart(title, {throughput_panel(r), speedup_panel(r)});
}

}  // namespace attnbench
