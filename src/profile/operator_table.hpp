// The operator table of one profiled variant: LibTorch operators aggregated by name, the top N
// by self time, as torch.profiler's key_averages().table(sort_by="self_cpu_time_total") lists
// them. Times are summed over every recorded step of every cycle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/trace_event.hpp"

namespace attnbench {

struct operator_row {
  std::string name;
  int64_t calls = 0;
  int64_t self_ns = 0;     // host time not spent in nested ops or regions
  int64_t total_ns = 0;    // host time including nested ops (a recursive op counts twice, as in torch)
  double self_share = 0;   // self_ns ÷ the self time of all operators
  int64_t device_ns = 0;   // GPU kernels launched by this op (0 on a CPU run)
  int64_t self_bytes = 0;  // net bytes allocated inside it and not inside a nested op (memory events)
};

struct operator_table {
  std::vector<operator_row> rows;  // the top N by self time, largest first
  int64_t operators = 0;           // distinct operator names in total
  int64_t all_self_ns = 0;         // self time of every operator, listed or not
  int64_t all_device_ns = 0;
  bool has_device = false;  // any GPU work was recorded: show the device column
};

operator_table make_operator_table(const std::vector<trace_event>& events, int64_t top);

std::string operator_table_markdown(const operator_table& t);
std::string operator_table_csv(const operator_table& t);

}  // namespace attnbench
