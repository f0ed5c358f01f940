#include "report/metric_text.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace attnbench {

std::string metric_value_text(const metric& m) {
  if (!std::isfinite(m.value)) return "n/a";
  if (m.unit == metric_unit::bytes) {
    constexpr std::array<const char*, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = m.value;
    std::size_t u = 0;
    while (std::fabs(v) >= 1024.0 && u + 1 < units.size()) {
      v /= 1024.0;
      ++u;
    }
    return u == 0 ? fmt::format("{:.0f} B", v) : fmt::format("{:.1f} {}", v, units[u]);
  }
  if (m.unit == metric_unit::share) return fmt::format("{:.1f}%", m.value * 100.0);
  if (m.unit == metric_unit::count) return fmt::format("{:.6g}", m.value);
  if (m.unit == metric_unit::ratio) return fmt::format("{:.3g}×", m.value);
  if (m.unit == metric_unit::ms) return fmt::format("{:.2f} ms", m.value);
  if (m.unit == metric_unit::seconds) return fmt::format("{:.3f} s", m.value);
  return m.unit.empty() ? fmt::format("{:.4g}", m.value) : fmt::format("{:.4g} {}", m.value, m.unit);
}

namespace {
constexpr const char* interval_opening = "95% interval [";
}  // namespace

std::string interval_note(double low, double high, const std::string& unit, std::size_t passes) {
  return fmt::format("{}{:.4g}, {:.4g}] {} over {} timed passes", interval_opening, low, high, unit, passes);
}

std::optional<std::pair<double, double>> metric_interval(const metric& m) {
  const auto at = m.note.find(interval_opening);
  if (at == std::string::npos) return std::nullopt;
  const char* p = m.note.c_str() + at + std::char_traits<char>::length(interval_opening);
  char* end = nullptr;
  const double low = std::strtod(p, &end);
  if (end == p || *end != ',') return std::nullopt;
  p = end + 1;
  const double high = std::strtod(p, &end);
  if (end == p || *end != ']' || !(low <= high)) return std::nullopt;
  return std::make_pair(low, high);
}

std::string metric_direction_text(metric_direction d) {
  switch (d) {
    case metric_direction::higher_is_better: return "higher is better";
    case metric_direction::lower_is_better: return "lower is better";
    case metric_direction::neither: break;
  }
  return "";
}

}  // namespace attnbench
