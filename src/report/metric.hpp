// The open metric record: a figure a technique measured about its own work, as a named value with
// a unit and a direction (what nvbench calls a summary). Techniques add these to their variant's
// record (variant_result::metrics); every writer renders them generically, so a new technique
// adds no field to the result struct and no line to any writer.
//
// Torch-free: the writers and the results reader (attnbench_base) use it too.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// Which way is better, so reports and `compare` can say "improved" or "regressed".
enum class metric_direction { higher_is_better, lower_is_better, neither };

inline std::string to_string(metric_direction d) {
  switch (d) {
    case metric_direction::higher_is_better: return "higher";
    case metric_direction::lower_is_better: return "lower";
    case metric_direction::neither: break;
  }
  return "neither";
}

inline std::optional<metric_direction> parse_metric_direction(const std::string& s) {
  if (s == "higher") return metric_direction::higher_is_better;
  if (s == "lower") return metric_direction::lower_is_better;
  if (s == "neither") return metric_direction::neither;
  return std::nullopt;
}

// Units the writers know how to scale (any other string is printed as it is, after the value).
namespace metric_unit {
inline constexpr const char* bytes = "bytes";    // printed in KiB / MiB / GiB
inline constexpr const char* share = "share";    // a fraction 0..1, printed as a percentage
inline constexpr const char* ms = "ms";
inline constexpr const char* seconds = "s";
inline constexpr const char* count = "count";    // printed without a unit
inline constexpr const char* ratio = "x";        // e.g. 0.5×
}  // namespace metric_unit

struct metric {
  std::string name;        // snake_case, unique within a variant: the key in results.json and CSV
  double value = std::numeric_limits<double>::quiet_NaN();  // NaN: not measured (`note` says why)
  std::string unit;        // one of metric_unit, or any other unit string ("GB/s", "tokens")
  metric_direction direction = metric_direction::neither;
  std::string source;      // the technique that reported it, e.g. "cast-precision"
  std::string description; // one line, for readers of the report
  std::string note;        // why the value is NaN, or a caveat; "" otherwise
};

// Adds or replaces `m` by name in `metrics`.
inline void set_metric(std::vector<metric>& metrics, metric m) {
  for (auto& existing : metrics)
    if (existing.name == m.name) {
      existing = std::move(m);
      return;
    }
  metrics.push_back(std::move(m));
}

inline const metric* find_metric(const std::vector<metric>& metrics, const std::string& name) {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace attnbench
