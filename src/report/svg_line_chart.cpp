#include "report/svg_line_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/svg_builder.hpp"
#include "report/svg_chart.hpp"

namespace attnbench {
namespace {

// Layout in SVG user units, matching svg_chart.cpp's width so the two sit well in one report.
constexpr double chart_width = 760;
constexpr double margin = 16;
constexpr double title_height = 30;
constexpr double plot_height = 260;
constexpr double y_axis_width = 64;   // tick labels and the rotated axis label
constexpr double x_axis_height = 44;  // tick labels and the axis label
constexpr double min_legend_width = 140;
constexpr double max_legend_width = 330;  // longer names are cut with an ellipsis
constexpr double legend_row = 18;
constexpr double font_size = 12;
constexpr double title_font_size = 15;
constexpr double char_width = 0.6 * font_size;
constexpr double point_radius = 3;
constexpr double whisker_cap = 3;
constexpr int max_ticks = 6;

constexpr const char* font = "Helvetica, Arial, sans-serif";
constexpr const char* text_colour = "#222222";
constexpr const char* muted_colour = "#777777";
constexpr const char* grid_colour = "#dddddd";
// Tableau 10: distinguishable, and friendly to the common colour-vision deficiencies.
constexpr const char* palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

}  // namespace

std::string svg_line_chart(const std::string& title, const std::string& x_label,
                           const std::vector<std::string>& x_ticks, const std::string& y_label,
                           const std::vector<line_series>& series) {
  size_t longest = 0;
  for (const auto& s : series) longest = std::max(longest, glyphs(s.name));
  const double legend_width =
      std::clamp(static_cast<double>(longest) * char_width + 50, min_legend_width, max_legend_width);
  const double legend_height = legend_row * static_cast<double>(series.size());
  const double body_height = std::max(plot_height + x_axis_height, legend_height);
  const double height = margin + title_height + body_height + margin;
  const double plot_left = margin + y_axis_width;
  const double plot_right = chart_width - margin - legend_width;
  const double plot_top = margin + title_height;
  const double plot_bottom = plot_top + plot_height;

  double max_value = 0;
  for (const auto& s : series) {
    for (double v : s.y)
      if (std::isfinite(v)) max_value = std::max(max_value, v);
    for (double v : s.y_high)
      if (std::isfinite(v)) max_value = std::max(max_value, v);
  }
  const double step = nice_tick_step(max_value, max_ticks);
  const double axis_max = std::max(step, std::ceil(max_value / step - 1e-9) * step);
  const auto y_of = [&](double v) {
    return plot_bottom - std::clamp(v, 0.0, axis_max) / axis_max * plot_height;
  };
  const size_t n = x_ticks.size();
  // Ticks centred in equal slots, so one value still sits mid-plot.
  const auto x_of = [&](size_t i) {
    return plot_left + (plot_right - plot_left) * (static_cast<double>(i) + 0.5) /
                           static_cast<double>(std::max<size_t>(n, 1));
  };

  svg_builder svg(chart_width, height, font, font_size);
  svg.text(
      margin, margin + 16, title,
      fmt::format("font-size=\"{:.0f}\" font-weight=\"bold\" fill=\"{}\"", title_font_size, text_colour));
  for (double t = 0; t <= axis_max + step / 2; t += step) {
    svg.line(plot_left, y_of(t), plot_right, y_of(t),
             fmt::format("stroke=\"{}\" stroke-width=\"1\"", grid_colour));
    svg.text(plot_left - 6, y_of(t) + 4, tick_text(t, step),
             fmt::format("text-anchor=\"end\" fill=\"{}\"", muted_colour));
  }
  svg.text(margin + 10, (plot_top + plot_bottom) / 2, y_label,
           fmt::format("text-anchor=\"middle\" fill=\"{}\" transform=\"rotate(-90 {:.1f} {:.1f})\"",
                       text_colour, margin + 10, (plot_top + plot_bottom) / 2));
  const auto tick_glyphs = static_cast<size_t>((plot_right - plot_left) /
                                               static_cast<double>(std::max<size_t>(n, 1)) / char_width);
  for (size_t i = 0; i < n; ++i)
    svg.text(x_of(i), plot_bottom + 16, fit(x_ticks[i], std::max<size_t>(tick_glyphs, 3)),
             fmt::format("text-anchor=\"middle\" fill=\"{}\"", muted_colour));
  svg.text((plot_left + plot_right) / 2, plot_bottom + 36, x_label,
           fmt::format("text-anchor=\"middle\" fill=\"{}\"", text_colour));
  svg.line(plot_left, plot_bottom, plot_right, plot_bottom,
           fmt::format("stroke=\"{}\" stroke-width=\"1\"", muted_colour));

  const auto legend_glyphs = static_cast<size_t>((legend_width - 30) / char_width);
  for (size_t k = 0; k < series.size(); ++k) {
    const line_series& s = series[k];
    const std::string colour = palette[k % std::size(palette)];
    svg.group("class=\"series\"");
    svg.group_with_title(s.name);
    // Consecutive finite points form one polyline; a NaN breaks the line.
    std::vector<std::pair<double, double>> run;
    const auto flush = [&] {
      if (run.size() > 1)
        svg.polyline(run, fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"2\"", colour));
      run.clear();
    };
    for (size_t i = 0; i < std::min(n, s.y.size()); ++i) {
      if (!std::isfinite(s.y[i])) {
        flush();
        continue;
      }
      run.emplace_back(x_of(i), y_of(s.y[i]));
    }
    flush();
    for (size_t i = 0; i < std::min(n, s.y.size()); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      const double lo = i < s.y_low.size() ? s.y_low[i] : not_a_number;
      const double hi = i < s.y_high.size() ? s.y_high[i] : not_a_number;
      if (std::isfinite(lo) && std::isfinite(hi)) {
        const std::string stroke = fmt::format("stroke=\"{}\" stroke-width=\"1.2\"", colour);
        svg.line(x_of(i), y_of(lo), x_of(i), y_of(hi), stroke);
        svg.line(x_of(i) - whisker_cap, y_of(lo), x_of(i) + whisker_cap, y_of(lo), stroke);
        svg.line(x_of(i) - whisker_cap, y_of(hi), x_of(i) + whisker_cap, y_of(hi), stroke);
      }
      svg.circle(x_of(i), y_of(s.y[i]), point_radius, fmt::format("fill=\"{}\"", colour));
    }
    svg.end_group();
    svg.end_group();
    const double ly = plot_top + legend_row * static_cast<double>(k);
    svg.line(plot_right + 16, ly + 8, plot_right + 34, ly + 8,
             fmt::format("stroke=\"{}\" stroke-width=\"2\"", colour));
    svg.text(plot_right + 40, ly + 12, fit(s.name, legend_glyphs), fmt::format("fill=\"{}\"", text_colour));
  }
  if (series.empty())
    svg.text(plot_left + 8, plot_top + 20, "no measured points", fmt::format("fill=\"{}\"", muted_colour));
  return svg.str();
}

}  // namespace attnbench
