#include "common/host_memory.hpp"

#include <fstream>
#include <sstream>

namespace attnbench {

std::optional<int64_t> parse_mem_available(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line)) {
    const std::string key = "MemAvailable:";
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    long long value = -1;
    std::string unit;
    if (!(fields >> value) || value < 0) return std::nullopt;
    fields >> unit;
    if (unit == "kB") return static_cast<int64_t>(value) * 1024;
    if (unit.empty()) return static_cast<int64_t>(value);
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> host_memory_available() {
  std::ifstream f("/proc/meminfo");
  if (!f) return std::nullopt;
  std::ostringstream text;
  text << f.rdbuf();
  return parse_mem_available(text.str());
}

}  // namespace attnbench
