#include "config/byte_size.hpp"

#include <string>

namespace attnbench {

std::optional<int64_t> parse_byte_size(const nlohmann::ordered_json& v) {
  if (v.is_number_integer()) {
    const auto n = v.get<int64_t>();
    return n >= 0 ? std::optional<int64_t>(n) : std::nullopt;
  }
  if (!v.is_string()) return std::nullopt;
  const std::string text = v.get<std::string>();
  const std::pair<const char*, double> units[] = {
      {"GiB", 1024.0 * 1024 * 1024}, {"MiB", 1024.0 * 1024}, {"KiB", 1024.0}};
  for (const auto& [unit, scale] : units) {
    const std::string u(unit);
    if (text.size() <= u.size() || text.compare(text.size() - u.size(), u.size(), u) != 0) continue;
    const std::string number = text.substr(0, text.size() - u.size());
    try {
      std::size_t used = 0;
      const double value = std::stod(number, &used);
      // Past 2^63 bytes (or "inf") the size has no int64 value: converting it would be undefined
      // behaviour (tests/fuzz/corpus/config/memory-limit-overflow.json).
      const double bytes = value * scale;
      if (used == number.size() && value > 0 && bytes < 0x1p63) return static_cast<int64_t>(bytes);
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  return std::nullopt;
}

int64_t device_memory_limit(const config& cfg) {
  const auto it = cfg.raw.find("device_memory_limit");
  if (it == cfg.raw.end()) return 0;
  return parse_byte_size(*it).value_or(0);
}

int64_t max_memory_bytes(const config& cfg) {
  const auto m = cfg.raw.find("measure");
  if (m == cfg.raw.end() || !m->is_object()) return 0;
  const auto it = m->find("max_memory_bytes");
  if (it == m->end()) return 0;
  return parse_byte_size(*it).value_or(0);
}

int64_t study_max_memory(const config& cfg) {
  const auto c = cfg.raw.find("check");
  if (c == cfg.raw.end() || !c->is_object()) return -1;
  const auto it = c->find("study_max_memory");
  if (it == c->end()) return -1;
  return parse_byte_size(*it).value_or(-1);
}

double explicit_max_time_s(const config& cfg) {
  const auto m = cfg.raw.find("measure");
  if (m == cfg.raw.end() || !m->is_object()) return 0;
  const auto it = m->find("max_time_s");
  return it != m->end() && it->is_number() ? it->get<double>() : 0;
}

}  // namespace attnbench
