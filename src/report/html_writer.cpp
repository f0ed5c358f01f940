#include "report/html_writer.hpp"

#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "report/html_page.hpp"
#include "report/metric_text.hpp"

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

std::string row_class(const variant_result& v) {
  if (v.status == status_kind::fail) return "fail";
  if (v.status != status_kind::pass) return "skipped";
  return "";
}

std::string variant_cell(const variant_result& v) {
  return fmt::format("<td class=\"text variant\">{}{}</td>", html_escape(v.name),
                     v.repetition.noisy ? " <span class=\"muted\">(noisy)</span>" : "");
}

std::string environment_block(const run_result& r) {
  const environment_info& e = r.environment;
  std::string out = "<dl class=\"env\">";
  const auto item = [&](const char* k, const std::string& v) {
    if (!v.empty()) out += fmt::format("<dt>{}</dt><dd>{}</dd>", k, html_escape(v));
  };
  item("Date", e.date);
  item("Commit", e.git_commit + (e.harness_version.empty() ? "" : " (attnbench " + e.harness_version + ")"));
  item("Device", e.device + (e.device_name.empty() ? "" : ": " + e.device_name));
  item("CPU", e.cpu_model + (e.cpu_id.empty() ? "" : " (" + e.cpu_id + ")"));
  item("Threads", std::to_string(e.threads));
  item("LibTorch", e.torch_version);
  item("Config", e.config_path + (e.config_hash.empty() ? "" : " (sha256 " + e.config_hash.substr(0, 12) + ")"));
  item("Model", fmt::format("{}: {} layers, hidden {}, {} heads", r.model.preset, r.model.layers, r.model.hidden,
                            r.model.heads));
  item("Workload", fmt::format("{} samples, {}", r.workload.samples, r.workload.lengths));
  item("Rounds", fmt::format("{} ({}{}{})", r.repetitions, r.repetition_mode,
                             r.stop_reason.empty() ? "" : ", ", r.stop_reason));
  out += "</dl>\n";
  return out;
}

}  // namespace

void html_writer::do_write(const run_result& r, std::ostream& out) const {
  std::string body = fmt::format("<h1>attnbench: {}</h1>\n", html_escape(r.name));
  if (!r.complete)
    body += fmt::format("<p class=\"fail\"><strong>Incomplete run: {}.</strong> The figures are what was measured "
                        "before it stopped.</p>\n",
                        html_escape(r.incomplete_reason));
  body += environment_block(r);

  ojson thr_items = ojson::array(), speed_items = ojson::array();
  body += "<h2>Throughput</h2>\n<figure class=\"chart\" id=\"chart-throughput\"></figure>\n";
  body += "<table id=\"throughput\"><thead><tr><th class=\"text\">Variant</th><th class=\"text\">Status</th>"
          "<th>samples/s</th><th>95% low</th><th>95% high</th><th>tokens/s</th><th>Rounds</th></tr></thead><tbody>\n";
  for (const auto& v : r.variants) {
    body += fmt::format("<tr class=\"{}\" data-variant=\"{}\">{}<td class=\"text status\">{}</td>{}{}{}{}<td>{}</td></tr>\n",
                        row_class(v), html_escape(v.name), variant_cell(v), status_text(v.status, v.check),
                        html_number_cell(v.throughput.geomean, "throughput"),
                        html_number_cell(v.throughput.geomean_ci_low, "throughput-low"),
                        html_number_cell(v.throughput.geomean_ci_high, "throughput-high"),
                        html_number_cell(v.tokens_per_s.geomean, "tokens"), v.throughput.n);
    if (std::isfinite(v.throughput.geomean))
      thr_items.push_back({{"label", v.name}, {"value", number(v.throughput.geomean)},
                           {"low", number(v.throughput.geomean_ci_low)}, {"high", number(v.throughput.geomean_ci_high)},
                           {"fail", v.status == status_kind::fail}});
  }
  body += "</tbody></table>\n";

  body += fmt::format("<h2>Speedup over {}</h2>\n<figure class=\"chart\" id=\"chart-speedup\"></figure>\n",
                      html_escape(r.baseline));
  body += "<table id=\"speedup\"><thead><tr><th class=\"text\">Variant</th><th>Speedup</th><th>95% low</th>"
          "<th>95% high</th><th class=\"text\">Interval</th><th class=\"text\">Output check</th>"
          "<th>rel. L2</th></tr></thead><tbody>\n";
  for (const auto& v : r.variants) {
    body += fmt::format("<tr class=\"{}\" data-variant=\"{}\">{}{}{}{}<td class=\"text\">{}</td>"
                        "<td class=\"text check\">{}</td>{}</tr>\n",
                        row_class(v), html_escape(v.name), variant_cell(v), html_number_cell(v.speedup.geomean, "speedup"),
                        html_number_cell(v.speedup.geomean_ci_low, "speedup-low"),
                        html_number_cell(v.speedup.geomean_ci_high, "speedup-high"), to_string(v.speedup.method),
                        html_escape(to_string(v.check.status) + (v.check.message.empty() ? "" : ": " + v.check.message)),
                        html_number_cell(v.check.rel_l2, "rel-l2"));
    if (std::isfinite(v.speedup.geomean))
      speed_items.push_back({{"label", v.name}, {"value", number(v.speedup.geomean)},
                             {"low", number(v.speedup.geomean_ci_low)}, {"high", number(v.speedup.geomean_ci_high)},
                             {"fail", v.status == status_kind::fail}});
  }
  body += "</tbody></table>\n";

  body += "<h2>Latency per batch</h2>\n<table id=\"latency\"><thead><tr><th class=\"text\">Variant</th>"
          "<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>Peak memory MiB</th><th>GFLOP/s</th>"
          "<th>Share of ceiling</th></tr></thead><tbody>\n";
  for (const auto& v : r.variants)
    body += fmt::format("<tr class=\"{}\" data-variant=\"{}\">{}{}{}{}{}{}{}</tr>\n", row_class(v), html_escape(v.name),
                        variant_cell(v), html_number_cell(v.latency_ms.p50, "p50"),
                        html_number_cell(v.latency_ms.p90, "p90"), html_number_cell(v.latency_ms.p99, "p99"),
                        html_number_cell(v.peak_memory_bytes >= 0 ? static_cast<double>(v.peak_memory_bytes) / (1 << 20)
                                                                  : not_a_number,
                                         "peak-memory"),
                        html_number_cell(v.achieved_gflops, "gflops"), html_number_cell(v.ceiling_share, "ceiling-share"));
  body += "</tbody></table>\n";

  bool any_metric = false;
  std::string metrics = "<h2>Technique metrics</h2>\n<table id=\"metrics\"><thead><tr><th class=\"text\">Variant</th>"
                        "<th class=\"text\">Metric</th><th>Value</th><th class=\"text\">Unit</th>"
                        "<th class=\"text\">Reads</th><th class=\"text\">Source</th></tr></thead><tbody>\n";
  for (const auto& v : r.variants)
    for (const auto& m : v.metrics) {
      any_metric = true;
      metrics += fmt::format("<tr data-variant=\"{}\" data-metric=\"{}\"><td class=\"text\">{}</td><td class=\"text\" "
                             "title=\"{}\">{}</td>{}<td class=\"text\">{}</td><td class=\"text\">{}</td><td "
                             "class=\"text\">{}</td></tr>\n",
                             html_escape(v.name), html_escape(m.name), html_escape(v.name), html_escape(m.description),
                             html_escape(m.name), html_number_cell(m.value, "metric"), html_escape(m.unit),
                             html_escape(metric_value_text(m)), html_escape(m.source));
    }
  metrics += "</tbody></table>\n";
  body += any_metric ? metrics : "<h2>Technique metrics</h2>\n<p class=\"muted\">No variant reported a technique metric.</p>\n";

  body += "<h2>Notes</h2>\n<ul>\n";
  for (const auto& v : r.variants) {
    if (!v.reason.empty() && v.status != status_kind::pass)
      body += fmt::format("<li>{} {}: {}</li>\n", to_string(v.status), html_escape(v.name), html_escape(v.reason));
    for (const auto& n : v.notes) body += fmt::format("<li>{}: {}</li>\n", html_escape(v.name), html_escape(n));
  }
  body += "</ul>\n<p class=\"muted\">Throughput: geometric mean over the timed rounds with its 95% t interval on the "
          "logs; speedup: geometric mean of the per-round ratios (README \"How it measures\"). Written by attnbench.</p>\n";

  ojson charts = ojson::array();
  charts.push_back({{"id", "chart-throughput"}, {"kind", "bars"}, {"title", "Throughput"}, {"unit", "samples/s"},
                    {"items", thr_items}, {"reference", nullptr}});
  charts.push_back({{"id", "chart-speedup"}, {"kind", "bars"}, {"title", "Speedup over " + r.baseline}, {"unit", "×"},
                    {"items", speed_items}, {"reference", 1}});
  out << html_page("attnbench: " + r.name, body, ojson{{"charts", charts}});
}

}  // namespace attnbench
