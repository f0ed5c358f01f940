#include "report/sweep_writers.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/sweep.hpp"
#include "report/csv_writer.hpp"
#include "report/markdown_writer.hpp"
#include "report/metric_text.hpp"
#include "report/svg_line_chart.hpp"

namespace attnbench {
namespace {

constexpr const char* em_dash = "—";

std::vector<const sweep_axis_result*> varying_axes(const sweep_result& s) {
  std::vector<const sweep_axis_result*> out;
  for (const auto& a : s.axes)
    if (a.values.size() > 1) out.push_back(&a);
  return out;
}

std::string param(const sweep_point_result& p, const std::string& axis) {
  for (const auto& [name, value] : p.params)
    if (name == axis) return value;
  return {};
}

// llama-bench's spelling of a parameter count: "162.26 M", "1.10 B".
std::string parameter_text(int64_t n) {
  const auto x = static_cast<double>(n);
  if (x >= 1e9) return fmt::format("{:.2f} B", x / 1e9);
  if (x >= 1e6) return fmt::format("{:.2f} M", x / 1e6);
  if (x >= 1e3) return fmt::format("{:.2f} K", x / 1e3);
  return fmt::format("{}", n);
}

std::string backend_text(const std::string& device) {
  if (device.rfind("cuda", 0) == 0) return "CUDA";
  if (device.rfind("cpu", 0) == 0) return "CPU";
  return device;
}

}  // namespace

std::string llama_bench_table(const sweep_result& sweep) {
  const bool has_test = std::any_of(sweep.axes.begin(), sweep.axes.end(),
                                    [](const sweep_axis_result& a) { return a.name == "test"; });
  if (!has_test) return {};
  std::ostringstream out;
  out << "| model | size | params | backend | threads | variant | test | t/s | check |\n";
  out << "| --- | ---: | ---: | --- | ---: | --- | --- | ---: | --- |\n";
  for (const auto& p : sweep.points) {
    const std::string test_name = param(p, "test");
    const auto test = parse_generate_test(test_name);
    const run_result& r = p.result;
    for (const auto& v : r.variants) {
      const metric* size = find_metric(v.metrics, "weight_bytes");
      std::string rate = em_dash;
      if (v.status == status_kind::skipped || hit_limit(v.status)) {
        rate = em_dash;
      } else if (const metric* m = test ? find_metric(v.metrics, test->prefill ? "prefill_tokens_per_s"
                                                                                : "decode_tokens_per_s")
                                        : nullptr;
                 m && std::isfinite(m->value)) {
        const auto ci = metric_interval(*m);
        rate = ci ? fmt::format("{:.2f} [{:.2f}–{:.2f}]", m->value, ci->first, ci->second)
                  : fmt::format("{:.2f}", m->value);
      } else {
        rate = "n/a";
      }
      std::string check = to_string(v.status);
      if (v.status == status_kind::skipped || hit_limit(v.status)) check += ": " + v.reason;
      if (v.name == r.baseline) check += " (baseline)";
      const std::vector<std::string> row{markdown_cell(r.model.preset),
                                         size ? metric_value_text(*size) : std::string(em_dash),
                                         parameter_text(r.model.parameters),
                                         backend_text(r.environment.device),
                                         fmt::format("{}", r.environment.threads),
                                         markdown_cell(v.name),
                                         markdown_cell(test_name),
                                         rate,
                                         markdown_cell(check)};
      out << "| " << fmt::format("{}", fmt::join(row, " | ")) << " |\n";
    }
  }
  return out.str();
}

std::string sweep_csv(const sweep_result& sweep) {
  std::ostringstream out;
  csv_layout layout;
  for (const auto& p : sweep.points)
    for (const auto& v : p.result.variants) layout.add(v);
  std::vector<std::string> header;
  for (const auto& a : sweep.axes) header.push_back(csv_quoted(a.name));
  for (auto& c : csv_columns(layout)) header.push_back(std::move(c));
  write_csv_row(out, header);
  for (const auto& p : sweep.points) {
    for (const auto& v : p.result.variants) {
      std::vector<std::string> row;
      for (const auto& a : sweep.axes) row.push_back(csv_quoted(param(p, a.name)));
      for (auto& f : csv_fields(v, layout)) row.push_back(std::move(f));
      write_csv_row(out, row);
    }
  }
  return out.str();
}

std::string sweep_markdown(const sweep_result& sweep, const std::string& chart_file) {
  std::ostringstream out;
  out << "# " << sweep.name << " — sweep\n\n";
  if (!sweep.complete)
    out << fmt::format("> **Incomplete: {} of {} points ran.** {}. The points below are what was measured.\n\n",
                       sweep.points.size(), sweep.points_planned, sweep.incomplete_reason);
  std::vector<std::string> axes;
  for (const auto& a : sweep.axes)
    axes.push_back(fmt::format("`{}` ∈ {{{}}}", a.name, fmt::join(a.values, ", ")));
  out << fmt::format(
      "{} points over {}; every point runs the same variants against its own baseline, "
      "measured in the same run.\n\n",
      sweep.points.size(), fmt::join(axes, " × "));
  if (!sweep.points.empty()) {
    out << "First point: " << markdown_environment(sweep.points.front().result) << '\n';
  }
  if (!chart_file.empty())
    out << "![" << (sweep.chart == "throughput" ? std::string("Throughput") : sweep.chart)
        << " against the swept axis](" << chart_file << ")\n\n";

  // The summary: one row per point and variant; the axes columns only for axes that vary.
  out << "## Summary\n\n";
  const auto varying = varying_axes(sweep);
  std::vector<std::string> head, rule;
  for (const auto* a : varying) {
    head.push_back(markdown_cell(a->name));
    rule.push_back(a->numeric ? "---:" : "---");
  }
  for (const char* h : {"Method", "Throughput (samples/s)", "Speedup vs baseline", "Check"})
    head.emplace_back(h);
  for (const char* r : {"---", "---:", "---:", "---"}) rule.emplace_back(r);
  // A sweep charted by the check's cosine shows it beside the check (a pruning sweep's trade-off).
  const bool cosine = sweep.chart != "throughput";
  if (cosine) {
    head.insert(head.end(), {"Cosine mean", "Cosine min"});
    rule.insert(rule.end(), {"---:", "---:"});
  }
  out << "| " << fmt::format("{}", fmt::join(head, " | ")) << " |\n";
  out << "| " << fmt::format("{}", fmt::join(rule, " | ")) << " |\n";
  for (const auto& p : sweep.points) {
    for (const auto& v : p.result.variants) {
      std::vector<std::string> row;
      for (const auto* a : varying) row.push_back(markdown_cell(param(p, a->name)));
      row.push_back(markdown_cell(v.name));
      if (v.status == status_kind::skipped || hit_limit(v.status)) {
        row.insert(row.end(), {em_dash, em_dash, markdown_cell(to_string(v.status) + ": " + v.reason)});
      } else {
        row.push_back(markdown_throughput_cell(v.throughput));
        row.push_back(markdown_speedup_cell(v));
        row.push_back(v.status == status_kind::fail ? markdown_cell("FAIL: " + v.reason)
                                                    : to_string(v.check.status));
      }
      if (cosine)
        for (double c : {v.check.cosine_mean, v.check.cosine_min})
          row.push_back(std::isfinite(c) ? fmt::format("{:.5f}", c) : std::string(em_dash));
      out << "| " << fmt::format("{}", fmt::join(row, " | ")) << " |\n";
    }
  }
  if (const std::string grid = llama_bench_table(sweep); !grid.empty())
    out << "\n## llama-bench table\n\n"
        << "t/s: prompt tokens per second of the prefill (pp), tokens per second of the decode steps (tg); "
           "the geometric mean over the timed passes, its 95% interval in brackets. size: the weights as the "
           "variant stores them. check: the variant's tokens and teacher-forced logits against the baseline's "
           "at the same test.\n\n"
        << grid;
  out << "\n## Points\n";
  for (const auto& p : sweep.points) {
    out << "\n### " << p.label() << "\n\n" << markdown_table(p.result);
    if (const std::string server = markdown_server_tables(p.result); !server.empty()) out << '\n' << server;
  }
  return out.str();
}

std::string sweep_svg(const sweep_result& sweep) {
  if (sweep.axes.empty()) return svg_line_chart(sweep.name, "", {}, "samples/s", {});
  const auto varying = varying_axes(sweep);
  const sweep_axis_result& x_axis = varying.empty() ? sweep.axes.front() : *varying.front();
  // A line is a variant at one combination of the other varying axes' values.
  std::vector<line_series> series;
  std::map<std::string, size_t> index;
  for (const auto& p : sweep.points) {
    std::vector<std::string> rest;
    for (const auto* a : varying)
      if (a != &x_axis) rest.push_back(a->name + "=" + param(p, a->name));
    const auto x = std::find(x_axis.values.begin(), x_axis.values.end(), param(p, x_axis.name));
    if (x == x_axis.values.end()) continue;
    const auto xi = static_cast<size_t>(x - x_axis.values.begin());
    for (const auto& v : p.result.variants) {
      const std::string name = rest.empty() ? v.name : fmt::format("{} ({})", v.name, fmt::join(rest, ", "));
      auto it = index.find(name);
      if (it == index.end()) {
        it = index.emplace(name, series.size()).first;
        const auto n = x_axis.values.size();
        series.push_back({name, std::vector<double>(n, not_a_number), std::vector<double>(n, not_a_number),
                          std::vector<double>(n, not_a_number)});
      }
      if (v.status == status_kind::skipped) continue;
      line_series& s = series[it->second];
      if (sweep.chart == "cosine_mean" || sweep.chart == "cosine_min") {
        // The output check's per-sample cosine to the baseline: no interval (one check pass).
        s.y[xi] = sweep.chart == "cosine_mean" ? v.check.cosine_mean : v.check.cosine_min;
        continue;
      }
      s.y[xi] = v.throughput.geomean;
      s.y_low[xi] = v.throughput.geomean_ci_low;
      s.y_high[xi] = v.throughput.geomean_ci_high;
    }
  }
  if (sweep.chart == "cosine_mean" || sweep.chart == "cosine_min")
    return svg_line_chart(fmt::format("{}: {} against {}", sweep.name, sweep.chart, x_axis.name), x_axis.name,
                          x_axis.values,
                          fmt::format("{} of the outputs to the baseline's (output check)",
                                      sweep.chart == "cosine_mean" ? "mean per-sample cosine" : "least per-sample cosine"),
                          series);
  return svg_line_chart(fmt::format("{}: throughput against {}", sweep.name, x_axis.name), x_axis.name,
                        x_axis.values, "samples/s (geometric mean, 95% CI)", series);
}

}  // namespace attnbench
