// A small SVG builder and the one chart shape attnbench draws: horizontal bars, one row per
// variant, with an interval whisker per bar. Standalone SVG 1.1 with presentation attributes only
// (no CSS, no scripts, no fonts to load), because GitHub shows a .svg file referenced from
// markdown through an <img>, which runs none of those.
#pragma once

#include <string>
#include <vector>

#include "report/result.hpp"

namespace attnbench {

struct chart_bar {
  std::string label;
  double value = not_a_number;      // NaN: no bar, `note` is written in its place
  double error_low = not_a_number;  // the whisker, when both ends are finite
  double error_high = not_a_number;
  bool failed = false;     // drawn in the failure colour
  std::string value_text;  // printed after the bar
  std::string note;        // printed instead of a bar (e.g. "skipped: needs a GPU")
};

struct bar_panel {
  std::string title;
  std::string axis_label;
  double reference = not_a_number;  // a dashed vertical line at this value (1× for speedups)
  std::vector<chart_bar> bars;
};

// Panels stacked top to bottom under one title. Each drawn bar is a <rect class="bar">, nothing
// else has that class (tests count them). Values must be ≥ 0; the axis starts at 0 so bar
// lengths compare honestly.
std::string svg_bar_chart(const std::string& title, const std::vector<bar_panel>& panels);

// 1, 2 or 5 times a power of ten, the smallest such step that splits [0, max] into at most
// `max_ticks` intervals. max ≤ 0 or not finite → 1.
double nice_tick_step(double max, int max_ticks);

}  // namespace attnbench
