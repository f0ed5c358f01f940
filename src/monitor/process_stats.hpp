// This process's CPU time and resident memory, read from /proc/self/stat and /proc/self/statm
// (Linux; elsewhere the reads fail and the values are absent). The names of the metrics built on
// them are Prometheus' standard process_* ones.
#pragma once

#include <optional>
#include <string>

namespace attnbench {

struct process_stats {
  double cpu_seconds = 0;     // user + system, since the process started
  double resident_bytes = 0;  // resident set size
};

// Nullopt when /proc cannot be read or parsed.
std::optional<process_stats> read_process_stats();

// The parsers, exposed for tests: the contents of /proc/self/stat and /proc/self/statm.
// `ticks_per_s` from sysconf(_SC_CLK_TCK), `page_bytes` from sysconf(_SC_PAGESIZE).
std::optional<double> parse_proc_stat_cpu_seconds(const std::string& stat, double ticks_per_s);
std::optional<double> parse_proc_statm_resident_bytes(const std::string& statm, double page_bytes);

}  // namespace attnbench
