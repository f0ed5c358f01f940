#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/svg_builder.hpp"

namespace attnbench {
namespace {

// Layout, in SVG user units (pixels at 100%): wide enough for GitHub's 880 px content column
// at full size, and small text that stays legible when scaled down.
constexpr double chart_width = 760;
constexpr double margin = 16;
constexpr double title_height = 30;
constexpr double panel_title_height = 26;
constexpr double row_height = 24;
constexpr double bar_height = 14;
constexpr double axis_height = 40;  // tick labels and the axis label under the rows
constexpr double panel_gap = 14;
constexpr double font_size = 12;
constexpr double title_font_size = 15;
constexpr double char_width = 0.6 * font_size;  // average advance of a sans-serif glyph
constexpr double label_gap = 10;
constexpr double min_label_width = 80;
constexpr double max_label_width = 260;   // longer labels are cut with an ellipsis
constexpr double value_text_width = 130;  // room after the longest bar for its value
constexpr int max_ticks = 6;
constexpr double whisker_cap = 4;  // half height of the whisker's end caps

constexpr const char* font = "Helvetica, Arial, sans-serif";
constexpr const char* bar_colour = "#4e79a7";
constexpr const char* failed_colour = "#e15759";
constexpr const char* text_colour = "#222222";
constexpr const char* muted_colour = "#777777";
constexpr const char* grid_colour = "#dddddd";

double panel_height(const bar_panel& p) {
  return panel_title_height + row_height * static_cast<double>(std::max<size_t>(p.bars.size(), 1)) +
         axis_height;
}

void draw_panel(svg_builder& svg, const bar_panel& p, double top, double label_width) {
  const double plot_left = margin + label_width + label_gap;
  const double plot_width = chart_width - plot_left - margin - value_text_width;
  svg.text(margin, top + 17, p.title, "font-weight=\"bold\" fill=\"" + std::string(text_colour) + "\"");

  double max_value = std::isfinite(p.reference) ? p.reference : 0;
  for (const auto& b : p.bars) {
    if (std::isfinite(b.value)) max_value = std::max(max_value, b.value);
    if (std::isfinite(b.error_high)) max_value = std::max(max_value, b.error_high);
  }
  const double step = nice_tick_step(max_value, max_ticks);
  const double axis_max = std::max(step, std::ceil(max_value / step - 1e-9) * step);
  const auto x_of = [&](double v) {
    return plot_left + std::clamp(v, 0.0, axis_max) / axis_max * plot_width;
  };

  const double rows_top = top + panel_title_height;
  const double rows_bottom = rows_top + row_height * static_cast<double>(std::max<size_t>(p.bars.size(), 1));
  for (double t = 0; t <= axis_max + step / 2; t += step) {
    svg.line(x_of(t), rows_top, x_of(t), rows_bottom,
             fmt::format("stroke=\"{}\" stroke-width=\"1\"", grid_colour));
    svg.text(x_of(t), rows_bottom + 15, tick_text(t, step),
             fmt::format("text-anchor=\"middle\" fill=\"{}\"", muted_colour));
  }
  svg.text(plot_left + plot_width / 2, rows_bottom + 32, p.axis_label,
           fmt::format("text-anchor=\"middle\" fill=\"{}\"", text_colour));
  // Under the bars and labels, like the grid: a reference, not data.
  if (std::isfinite(p.reference))
    svg.line(x_of(p.reference), rows_top - 2, x_of(p.reference), rows_bottom + 2,
             fmt::format("stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"", muted_colour));
  if (p.bars.empty())
    svg.text(plot_left + 4, rows_top + row_height / 2 + 4, "no variants",
             fmt::format("fill=\"{}\"", muted_colour));

  const auto label_glyphs = static_cast<size_t>(label_width / char_width);
  for (size_t i = 0; i < p.bars.size(); ++i) {
    const chart_bar& b = p.bars[i];
    const double row_top = rows_top + row_height * static_cast<double>(i);
    const double text_y = row_top + row_height / 2 + 4;  // baseline that centres 12 px text
    svg.text(plot_left - label_gap, text_y, fit(b.label, label_glyphs),
             fmt::format("text-anchor=\"end\" fill=\"{}\"", b.failed ? failed_colour : text_colour));
    if (!std::isfinite(b.value)) {
      // The note runs to the right edge, cut there; the whole of it is the tooltip.
      const auto note_glyphs = static_cast<size_t>((chart_width - margin - plot_left - 4) / char_width);
      svg.group_with_title(b.label + ": " + b.note);
      svg.text(plot_left + 4, text_y, fit(b.note, note_glyphs),
               fmt::format("fill=\"{}\" font-style=\"italic\"", muted_colour));
      svg.end_group();
      continue;
    }
    const double bar_top = row_top + (row_height - bar_height) / 2;
    double end = x_of(b.value);
    svg.group_with_title(b.label + ": " + b.value_text + (b.note.empty() ? "" : " — " + b.note));
    svg.rect(plot_left, bar_top, end - plot_left, bar_height,
             fmt::format("class=\"bar\" fill=\"{}\"", b.failed ? failed_colour : bar_colour));
    if (std::isfinite(b.error_low) && std::isfinite(b.error_high)) {
      const double lo = x_of(b.error_low), hi = x_of(b.error_high), mid = bar_top + bar_height / 2;
      const std::string stroke = fmt::format("stroke=\"{}\" stroke-width=\"1.5\"", text_colour);
      svg.line(lo, mid, hi, mid, stroke);
      svg.line(lo, mid - whisker_cap, lo, mid + whisker_cap, stroke);
      svg.line(hi, mid - whisker_cap, hi, mid + whisker_cap, stroke);
      end = std::max(end, hi);
    }
    svg.end_group();
    const std::string text = b.value_text + (b.note.empty() ? "" : " " + b.note);
    svg.text(end + 6, text_y, text, fmt::format("fill=\"{}\"", b.failed ? failed_colour : text_colour));
  }
}

}  // namespace

double nice_tick_step(double max, int max_ticks_allowed) {
  if (!(max > 0) || !std::isfinite(max) || max_ticks_allowed < 1) return 1;
  const double raw = max / max_ticks_allowed;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw * (1 - 1e-12)) return m * magnitude;
  return 10 * magnitude;
}

std::string svg_bar_chart(const std::string& title, const std::vector<bar_panel>& panels) {
  size_t longest = 0;
  for (const auto& p : panels)
    for (const auto& b : p.bars) longest = std::max(longest, glyphs(b.label));
  const double label_width =
      std::clamp(static_cast<double>(longest) * char_width, min_label_width, max_label_width);

  double height = margin + title_height;
  for (const auto& p : panels) height += panel_height(p) + panel_gap;
  height += margin - panel_gap;

  svg_builder svg(chart_width, height, font, font_size);
  svg.text(
      margin, margin + 16, title,
      fmt::format("font-size=\"{:.0f}\" font-weight=\"bold\" fill=\"{}\"", title_font_size, text_colour));
  double top = margin + title_height;
  for (const auto& p : panels) {
    draw_panel(svg, p, top, label_width);
    top += panel_height(p) + panel_gap;
  }
  return svg.str();
}

}  // namespace attnbench
