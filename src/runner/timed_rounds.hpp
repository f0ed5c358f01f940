// The rounds of the measurement loop every scenario shares (runner/measurement_loop.hpp): warm-up
// passes, then timed rounds interleaved across variants (A B C, C B A, A B C …, so a drift in the
// machine's speed hits every variant alike, whatever its place in a round) until the repetition
// policy stops (stats/round_controller.hpp), then each variant's repetition record. A scenario
// says what one pass of a variant is; this loop decides how often to run it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "report/result.hpp"
#include "runner/executor_base.hpp"
#include "stats/round_controller.hpp"

namespace attnbench {

struct round_member {
  std::string name;
  bool is_baseline = false;
  // Runs one pass of the phase and returns its seconds, or nullopt when the pass failed: the
  // member then leaves the rotation (the scenario records why).
  std::function<std::optional<double>(pass_phase)> pass;
  bool active = true;          // in the rotation
  std::vector<double> pass_s;  // timed passes, one per round it took part in
};

struct rounds_outcome {
  int64_t rounds = 0;
  stop_reason reason = stop_reason::none;
  // Set when a signal stopped the rounds (common/interrupt.hpp): where, e.g. "SIGINT during warm-up
  // (pass 3 of 6)". A timed round it cut short is dropped whole, so every round stays paired.
  std::string interrupted;
};

// `progress(phase, variant, done, total)`; `agree(round, more)`: the decision every process
// takes (rank 0's, in a multi-process run; identity otherwise). A signal is honoured before any
// pass when `stop_between_passes`, else only between rounds, through `agree` (the ranks of a
// multi-process run must stop together).
rounds_outcome run_rounds(
    const measure_config& m, std::vector<round_member>& members,
    const std::function<void(const std::string&, const std::string&, int64_t, int64_t)>& progress,
    const std::function<bool(int64_t, bool)>& agree, bool stop_between_passes = true);

repetition_policy policy_of(const measure_config& m);
// The widths the stopping rule tests: those of the intervals the reports print.
interval_widths report_interval_widths();

// The run's and each variant's record of how the rounds went (after the variant's statistics
// are filled in: the widths are read from r.throughput and r.speedup).
void record_repetitions(const measure_config& m, const rounds_outcome& o, run_result& res);

}  // namespace attnbench
