// A technique metric (report/metric.hpp) as text: the value in its unit, scaled for reading
// (bytes in KiB/MiB/GiB, shares as percentages), or "n/a" with the metric's note. Every
// human-readable writer (markdown, JUnit) uses this one rendering.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "report/metric.hpp"

namespace attnbench {

std::string metric_value_text(const metric& m);  // "97.8 MiB", "42.0%", "12.31 ms", "n/a"

// A metric's 95% interval, as the note states it: "95% interval [LOW, HIGH] UNIT over N timed
// passes" (interval_note writes it; metric_interval reads it back for a table's cell).
std::string interval_note(double low, double high, const std::string& unit, std::size_t passes);
std::optional<std::pair<double, double>> metric_interval(const metric& m);

// "lower is better", "higher is better", or "" when neither.
std::string metric_direction_text(metric_direction d);

}  // namespace attnbench
