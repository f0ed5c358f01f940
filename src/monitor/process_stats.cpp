#include "monitor/process_stats.hpp"

#include <fstream>
#include <sstream>

#include <unistd.h>

namespace attnbench {
namespace {

std::optional<std::string> slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::optional<double> parse_proc_stat_cpu_seconds(const std::string& stat, double ticks_per_s) {
  // Field 2, the command, is in parentheses and may hold spaces and ')': the fields after it
  // start past the last ')'. utime and stime are fields 14 and 15, the 12th and 13th after it.
  const auto close = stat.rfind(')');
  if (close == std::string::npos || ticks_per_s <= 0) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  for (int k = 3; k <= 15; ++k) {
    if (!(rest >> field)) return std::nullopt;
    try {
      if (k == 14) utime = std::stod(field);
      if (k == 15) stime = std::stod(field);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return (utime + stime) / ticks_per_s;
}

std::optional<double> parse_proc_statm_resident_bytes(const std::string& statm, double page_bytes) {
  std::istringstream in(statm);
  double size_pages = 0, resident_pages = 0;
  if (!(in >> size_pages >> resident_pages)) return std::nullopt;
  return resident_pages * page_bytes;
}

std::optional<process_stats> read_process_stats() {
  const auto stat = slurp("/proc/self/stat");
  const auto statm = slurp("/proc/self/statm");
  if (!stat || !statm) return std::nullopt;
  const auto cpu = parse_proc_stat_cpu_seconds(*stat, static_cast<double>(sysconf(_SC_CLK_TCK)));
  const auto rss = parse_proc_statm_resident_bytes(*statm, static_cast<double>(sysconf(_SC_PAGESIZE)));
  if (!cpu || !rss) return std::nullopt;
  return process_stats{*cpu, *rss};
}

}  // namespace attnbench
