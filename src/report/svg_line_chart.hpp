// The sweep's chart: one line per series (a variant, or a variant at fixed values of the other
// axes) over the values of the swept axis, with the confidence interval as a whisker per point.
// The x axis is categorical (the axis's values, evenly spaced in the order given), so ranges such
// as "1-64*2" come out on a log scale. Same SVG rules as svg_chart.hpp.
#pragma once

#include <string>
#include <vector>

#include "report/result.hpp"

namespace attnbench {

struct line_series {
  std::string name;
  std::vector<double> y;      // one per x tick; NaN: no point there (the line breaks)
  std::vector<double> y_low;  // whisker ends, same length as y (or empty); NaN: none
  std::vector<double> y_high;
};

// Each series is a <g class="series"> holding its polyline(s) and one <circle> per finite point;
// nothing else has that class (tests count them). y starts at 0.
std::string svg_line_chart(const std::string& title, const std::string& x_label,
                           const std::vector<std::string>& x_ticks, const std::string& y_label,
                           const std::vector<line_series>& series);

}  // namespace attnbench
