#include "report/history_series.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/html_page.hpp"
#include "stats/summary.hpp"

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

constexpr double mad_to_sd = 1.4826;  // MAD × this estimates a normal distribution's standard deviation

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }
std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "n/a"; }
std::string short_commit(const std::string& c) { return c.substr(0, std::min<std::size_t>(c.size(), 12)); }
std::string short_date(const std::string& d) { return d.size() >= 16 ? d.substr(0, 10) + " " + d.substr(11, 5) : d; }

bool usable(const history_point& p) { return p.status == "PASS" && std::isfinite(p.samples_per_s) && p.samples_per_s > 0; }

// The band and position of every point of a series against the points before it.
std::vector<std::pair<history_band, band_position>> walk(const history_series& s) {
  std::vector<std::pair<history_band, band_position>> out;
  std::vector<double> earlier;
  for (const auto& p : s.points) {
    const history_band b = band_of(earlier);
    out.emplace_back(b, usable(p) ? position_in(b, p.samples_per_s) : band_position::unknown);
    if (usable(p)) earlier.push_back(p.samples_per_s);
  }
  return out;
}

}  // namespace

std::string to_string(band_position p) {
  switch (p) {
    case band_position::in: return "IN";
    case band_position::below: return "BELOW";
    case band_position::above: return "ABOVE";
    case band_position::unknown: break;
  }
  return "n/a";
}

history_band band_of(const std::vector<double>& earlier, int64_t window, int64_t min_points, double k, double floor) {
  std::vector<double> logs;
  for (double v : earlier)
    if (std::isfinite(v) && v > 0) logs.push_back(std::log(v));
  if (static_cast<int64_t>(logs.size()) > window) logs.erase(logs.begin(), logs.end() - window);
  history_band b;
  b.points = static_cast<int64_t>(logs.size());
  if (b.points < min_points) return b;
  const double centre = median(logs);
  std::vector<double> deviations;
  for (double l : logs) deviations.push_back(std::abs(l - centre));
  const double spread = mad_to_sd * median(deviations);
  b.defined = true;
  b.half_width = std::max(k * spread, floor);
  b.centre = std::exp(centre);
  b.low = std::exp(centre - b.half_width);
  b.high = std::exp(centre + b.half_width);
  return b;
}

band_position position_in(const history_band& band, double samples_per_s) {
  if (!band.defined || !std::isfinite(samples_per_s) || samples_per_s <= 0) return band_position::unknown;
  const double d = std::log(samples_per_s) - std::log(band.centre);
  if (d < -band.half_width) return band_position::below;
  if (d > band.half_width) return band_position::above;
  return band_position::in;
}

std::string history_series::group_key() const {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", config_name, config_hash, cpu_identity, device, threads);
}

std::string history_series::label() const {
  return fmt::format("{} · {} · {}, {} thread{} · config {}", config_name, cpu_identity, device, threads,
                     threads == 1 ? "" : "s", config_hash.substr(0, std::min<std::size_t>(config_hash.size(), 12)));
}

std::vector<history_series> series_of(const std::vector<history_point>& points) {
  std::vector<history_series> out;
  std::map<std::string, std::size_t> index;
  for (const auto& p : points) {
    history_series key{p.config_name, p.config_hash, p.cpu_identity, p.device, p.threads, p.variant, {}};
    const std::string k = key.group_key() + '\x1f' + p.variant;
    auto it = index.find(k);
    if (it == index.end()) {
      it = index.emplace(k, out.size()).first;
      out.push_back(std::move(key));
    }
    out[it->second].points.push_back(p);
  }
  // Series of one group side by side, in order of first appearance of the group.
  std::map<std::string, std::size_t> group_first;
  for (std::size_t j = 0; j < out.size(); ++j) group_first.emplace(out[j].group_key(), j);
  std::stable_sort(out.begin(), out.end(), [&](const history_series& a, const history_series& b) {
    return group_first.at(a.group_key()) < group_first.at(b.group_key());
  });
  return out;
}

std::vector<history_check_row> check_series(const std::vector<history_series>& series) {
  std::vector<history_check_row> rows;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    history_check_row row;
    row.series = &s;
    row.point = &s.points.back();
    std::vector<double> earlier;
    for (std::size_t i = 0; i + 1 < s.points.size(); ++i)
      if (usable(s.points[i])) earlier.push_back(s.points[i].samples_per_s);
    row.band = band_of(earlier);
    row.position = usable(*row.point) ? position_in(row.band, row.point->samples_per_s) : band_position::unknown;
    rows.push_back(row);
  }
  return rows;
}

std::string history_markdown(const std::vector<history_series>& series) {
  if (series.empty()) return "No runs recorded (or none match the filters).\n";
  std::string md;
  std::string group;
  for (const auto& s : series) {
    if (s.group_key() != group) {
      group = s.group_key();
      md += fmt::format("\n### {}\n\n", s.label());
      md += "| date | commit | variant | samples/s | 95% CI | speedup | rounds | status | band |\n";
      md += "|---|---|---|---:|---|---:|---:|---|---|\n";
    }
    const auto positions = walk(s);
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      const auto& [band, pos] = positions[i];
      md += fmt::format("| {} | {} | {} | {} | [{}–{}] | {} | {} | {}{} | {} |\n", short_date(p.date),
                        short_commit(p.git_commit), p.variant, num(p.samples_per_s), num(p.samples_per_s_low),
                        num(p.samples_per_s_high), num(p.speedup), p.rounds, p.status, p.noisy ? " (noisy)" : "",
                        band.defined ? fmt::format("{} [{}–{}]", to_string(pos), num(band.low), num(band.high))
                                     : fmt::format("n/a ({} earlier)", band.points));
    }
  }
  return md;
}

std::string history_check_markdown(const std::vector<history_check_row>& rows) {
  std::string md = "| series | variant | date | commit | samples/s | band (earlier points) | position |\n";
  md += "|---|---|---|---|---:|---|---|\n";
  for (const auto& r : rows)
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", r.series->label(), r.series->variant,
                      short_date(r.point->date), short_commit(r.point->git_commit), num(r.point->samples_per_s),
                      r.band.defined ? fmt::format("[{}–{}] ±{:.1f}% ({})", num(r.band.low), num(r.band.high),
                                                   r.band.half_width * 100, r.band.points)
                                     : fmt::format("n/a: {} earlier point{}, {} needed", r.band.points,
                                                   r.band.points == 1 ? "" : "s", history_defaults::min_points),
                      to_string(r.position));
  return md;
}

std::string history_html(const std::vector<history_series>& series, const std::string& db_path) {
  std::string body = fmt::format("<h1>attnbench history</h1>\n<p class=\"muted\">{} · {} series. A series is one "
                                 "config on one machine (CPU identity, device, threads) for one variant; a point "
                                 "outside the band of its series' earlier points is marked (README \"CI regression "
                                 "runs\").</p>\n",
                                 html_escape(db_path), series.size());
  ojson charts = ojson::array();
  std::string group;
  int chart_no = 0;
  ojson lines;
  std::string table;
  const auto close_group = [&] {
    if (group.empty()) return;
    charts.push_back(lines);
    body += table + "</tbody></table>\n";
  };
  for (const auto& s : series) {
    if (s.group_key() != group) {
      close_group();
      group = s.group_key();
      const std::string id = fmt::format("chart-series-{}", chart_no++);
      body += fmt::format("<h2 class=\"series\" data-series=\"{}\">{}</h2>\n<figure class=\"chart\" id=\"{}\"></figure>\n",
                          html_escape(s.label()), html_escape(s.label()), id);
      lines = ojson{{"id", id}, {"kind", "lines"}, {"title", s.config_name + " throughput"}, {"unit", "samples/s"},
                    {"series", ojson::array()}};
      table = "<table class=\"history\"><thead><tr><th class=\"text\">Date</th><th class=\"text\">Commit</th><th "
              "class=\"text\">Variant</th><th>samples/s</th><th>95% low</th><th>95% high</th><th>Speedup</th>"
              "<th class=\"text\">Status</th><th class=\"text\">Band</th></tr></thead><tbody>\n";
    }
    ojson pts = ojson::array();
    const auto positions = walk(s);
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      const auto& [band, pos] = positions[i];
      const bool flagged = pos == band_position::below || pos == band_position::above;
      pts.push_back({{"x", short_commit(p.git_commit).substr(0, 7) + " " + short_date(p.date).substr(5)},
                     {"value", number(p.samples_per_s)}, {"low", number(p.samples_per_s_low)},
                     {"high", number(p.samples_per_s_high)}, {"flag", flagged}});
      table += fmt::format("<tr class=\"{}\" data-variant=\"{}\"><td class=\"text\">{}</td><td class=\"text\">{}</td>"
                           "<td class=\"text\">{}</td>{}{}{}{}<td class=\"text\">{}</td><td class=\"text\">{}</td></tr>\n",
                           flagged ? "flag" : p.status == "FAIL" ? "fail" : "", html_escape(p.variant),
                           html_escape(short_date(p.date)), html_escape(short_commit(p.git_commit)),
                           html_escape(p.variant), html_number_cell(p.samples_per_s, "throughput"),
                           html_number_cell(p.samples_per_s_low, "throughput-low"),
                           html_number_cell(p.samples_per_s_high, "throughput-high"),
                           html_number_cell(p.speedup, "speedup"), html_escape(p.status),
                           band.defined ? fmt::format("{} [{}–{}]", to_string(pos), num(band.low), num(band.high))
                                        : "n/a");
    }
    lines["series"].push_back({{"label", s.variant}, {"points", pts}});
  }
  close_group();
  if (series.empty()) body += "<p>No runs recorded.</p>\n";
  return html_page("attnbench history", body, ojson{{"charts", charts}});
}

}  // namespace attnbench
