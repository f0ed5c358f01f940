#include "profile/operator_table.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "report/csv_writer.hpp"

namespace attnbench {
namespace {

std::string ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }
std::string mib(int64_t bytes) {
  return fmt::format("{:.2f}", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

// Markdown cells cannot hold a pipe; operator names never should, but be safe.
std::string cell(std::string s) {
  std::replace(s.begin(), s.end(), '|', '/');
  return s;
}

}  // namespace

operator_table make_operator_table(const std::vector<trace_event>& events, int64_t top) {
  const auto parents = enclosing_events(events);
  const auto self = self_times_ns(events, parents);
  std::map<std::string, operator_row> by_name;
  std::unordered_map<uint64_t, std::size_t> op_by_correlation;
  operator_table t;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const trace_event& e = events[i];
    if (e.kind != event_kind::op) continue;
    operator_row& r = by_name[e.name];
    r.name = e.name;
    ++r.calls;
    r.self_ns += self[i];
    r.total_ns += e.duration_ns();
    t.all_self_ns += self[i];
    if (e.correlation != 0) op_by_correlation[e.correlation] = i;
  }
  for (std::size_t i = 0; i < events.size(); ++i) {
    const trace_event& e = events[i];
    if (e.kind == event_kind::memory && parents[i] >= 0) {
      const trace_event& owner = events[static_cast<std::size_t>(parents[i])];
      if (owner.kind == event_kind::op) by_name[owner.name].self_bytes += e.bytes;
    } else if (e.kind == event_kind::device) {
      t.has_device = true;
      t.all_device_ns += e.duration_ns();
      auto it = op_by_correlation.find(e.linked_correlation);
      if (it != op_by_correlation.end()) by_name[events[it->second].name].device_ns += e.duration_ns();
    }
  }
  for (auto& [name, r] : by_name) {
    r.self_share =
        t.all_self_ns > 0 ? static_cast<double>(r.self_ns) / static_cast<double>(t.all_self_ns) : 0;
    t.rows.push_back(r);
  }
  t.operators = static_cast<int64_t>(t.rows.size());
  std::stable_sort(t.rows.begin(), t.rows.end(),
                   [](const operator_row& a, const operator_row& b) { return a.self_ns > b.self_ns; });
  if (static_cast<int64_t>(t.rows.size()) > top) t.rows.resize(static_cast<std::size_t>(top));
  return t;
}

std::string operator_table_markdown(const operator_table& t) {
  std::string out = "| Operator | Calls | Self CPU (ms) | Total CPU (ms) | Self CPU share |";
  out += t.has_device ? " CUDA (ms) |" : "";
  out += " Self memory (MiB) |\n|---|---:|---:|---:|---:|";
  out += t.has_device ? "---:|" : "";
  out += "---:|\n";
  for (const auto& r : t.rows) {
    out += fmt::format("| {} | {} | {} | {} | {:.1f}% |", cell(r.name), r.calls, ms(r.self_ns),
                       ms(r.total_ns), 100.0 * r.self_share);
    if (t.has_device) out += fmt::format(" {} |", ms(r.device_ns));
    out += fmt::format(" {} |\n", mib(r.self_bytes));
  }
  out += fmt::format("\n{} of {} operators; all operators' self CPU time: {} ms", t.rows.size(), t.operators,
                     ms(t.all_self_ns));
  if (t.has_device) out += fmt::format("; CUDA time: {} ms", ms(t.all_device_ns));
  return out + ".\n";
}

std::string operator_table_csv(const operator_table& t) {
  std::string out = "operator,calls,self_cpu_ms,total_cpu_ms,self_cpu_share,cuda_ms,self_memory_bytes\n";
  for (const auto& r : t.rows)
    out += fmt::format("{},{},{},{},{:.6f},{},{}\n", csv_quoted(r.name), r.calls, ms(r.self_ns),
                       ms(r.total_ns), r.self_share, ms(r.device_ns), r.self_bytes);
  return out;
}

}  // namespace attnbench
