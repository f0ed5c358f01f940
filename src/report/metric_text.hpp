// A technique metric (report/metric.hpp) as text: the value in its unit, scaled for reading
// (bytes in KiB/MiB/GiB, shares as percentages), or "n/a" with the metric's note. Every
// human-readable writer (markdown, JUnit) uses this one rendering.
#pragma once

#include <string>

#include "report/metric.hpp"

namespace attnbench {

std::string metric_value_text(const metric& m);  // "97.8 MiB", "42.0%", "12.31 ms", "n/a"

// "lower is better", "higher is better", or "" when neither.
std::string metric_direction_text(metric_direction d);

}  // namespace attnbench
