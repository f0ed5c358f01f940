// When to stop adding timed rounds: nvbench's stopping criterion, applied to interleaved rounds.
//
// Fixed mode runs exactly `repetitions` rounds (more only while `min_time_s` asks for them).
// Adaptive mode (the default) keeps adding rounds until every variant's throughput interval and
// every non-baseline variant's speedup interval have a relative half-width at or below `target`,
// with at least `min_repetitions` and at most `max_repetitions` rounds, and no round started that
// the time budget `max_time_s` (wall time of the timed phase) predicts it cannot finish. A variant
// that missed the target when the loop stopped is "noisy": every report flags it.
//
// Torch-free and clock-injected, so its decisions are tested with a fake clock and synthetic
// timings (tests/stats/test_round_controller.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnbench {

struct repetition_policy {
  bool adaptive = true;
  int64_t repetitions = 0;      // fixed: the rounds to run
  int64_t min_repetitions = 0;  // adaptive: rounds before the target is first tested
  int64_t max_repetitions = 0;  // both: never more rounds than this
  double max_time_s = 0;        // adaptive: budget of the timed phase, seconds (0: none)
  double min_time_s = 0;        // both: every variant's timed passes add up to at least this
  double target = 0;            // adaptive: relative half-width of the 95% intervals
};

// One variant's timed passes so far, as the controller reads them.
struct round_series {
  const std::vector<double>* pass_s = nullptr;  // seconds per timed pass, one per round it ran
  bool active = false;                          // still in the rotation
  bool is_baseline = false;
};

// The relative half-widths the target is tested on: (hi − lo) / 2 / centre of an interval.
// NaN (an interval not yet defined) never meets a target.
struct interval_widths {
  std::function<double(const std::vector<double>& pass_s)> throughput;
  std::function<double(const std::vector<double>& pass_s, const std::vector<double>& base_pass_s)> speedup;
};

// Why the loop stopped; to_string gives the reports' wording.
enum class stop_reason { none, fixed, target_met, max_repetitions, time_budget, nothing_to_run };
std::string to_string(stop_reason r);

class round_controller {
 public:
  // `now`: a monotonic clock in seconds (a fake one in tests).
  round_controller(repetition_policy policy, interval_widths widths, std::function<double()> now);

  // Call once, right before the first timed round. A resumed run (runner/resume_state.hpp) passes
  // the rounds it keeps and their seconds: the time budget counts them, and their mean round
  // stands for the longest one until a round is timed.
  void start(double already_s = 0, int64_t already_rounds = 0);
  // After `rounds` complete rounds: whether to run another. Records why not.
  bool another_round(int64_t rounds, const std::vector<round_series>& series);
  stop_reason reason() const { return reason_; }

  // Whether one variant's intervals meet the target (fixed mode: always true; there is no target).
  bool meets_target(const round_series& s, const round_series* baseline) const;

 private:
  bool enough_time(const std::vector<round_series>& series) const;

  repetition_policy policy_;
  interval_widths widths_;
  std::function<double()> now_;
  double started_ = 0;
  double last_round_end_ = 0;
  double longest_round_s_ = 0;
  stop_reason reason_ = stop_reason::none;
};

}  // namespace attnbench
