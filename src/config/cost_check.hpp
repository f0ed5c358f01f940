// What a config will cost, checked before anything runs (`validate`, and so `run`): a config
// whose workload and model cannot fit in this machine's memory, or whose measurement would run
// for more than a day, is refused with the estimate that failed (README "What happens when things
// go wrong"). `--no-cost-check` skips it for a user who really means it.
//
// Both estimates are lower bounds, from the config's numbers alone (nothing is allocated or
// built): memory counts the token ids, the fp32 weights, the outputs kept for the check and the
// largest batch's activations at their smallest; time counts the passes at least planned, each at
// least 2 FLOPs per weight per shortest-possible token, at a rate above any device's peak. So a
// refusal means the config cannot work, never that it might be slow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/config.hpp"

namespace attnbench {

// What the machine offers: injected in tests.
struct machine_budget {
  int64_t memory_bytes = 0;    // physical memory (0: unknown, memory not checked)
  int64_t cpu_cores = 1;       // logical CPUs
  double max_time_s = 86400;   // a measurement longer than this is refused (a day)
};

machine_budget this_machine_budget();

struct cost_estimate {
  int64_t workload_bytes = 0, weight_bytes = 0, output_bytes = 0, activation_bytes = 0;
  int64_t total_bytes() const { return workload_bytes + weight_bytes + output_bytes + activation_bytes; }
  double passes = 0;            // check, warm-up and timed passes at least, every variant
  double flops_per_pass = 0;    // at least
  double peak_flops = 0;        // an upper bound of the device's rate, FLOP/s
  double seconds() const { return peak_flops > 0 ? passes * flops_per_pass / peak_flops : 0; }
};

cost_estimate estimate_cost(const config& cfg, const machine_budget& m);

// Every estimate over the machine's budget, as problems at the config keys that drive it.
std::vector<problem> cost_problems(const config& cfg, const machine_budget& m);

}  // namespace attnbench
