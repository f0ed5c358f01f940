#include "stats/round_controller.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace attnbench {

std::string to_string(stop_reason r) {
  switch (r) {
    case stop_reason::none:
      return "";
    case stop_reason::fixed:
      return "fixed repetitions";
    case stop_reason::target_met:
      return "target met";
    case stop_reason::max_repetitions:
      return "max_repetitions reached";
    case stop_reason::time_budget:
      return "time budget reached";
    case stop_reason::nothing_to_run:
      return "no variant to run";
  }
  return "";
}

round_controller::round_controller(repetition_policy policy, interval_widths widths,
                                   std::function<double()> now)
    : policy_(policy), widths_(std::move(widths)), now_(std::move(now)) {}

void round_controller::start(double already_s, int64_t already_rounds) {
  last_round_end_ = now_();
  started_ = last_round_end_ - already_s;
  longest_round_s_ = already_rounds > 0 ? already_s / static_cast<double>(already_rounds) : 0;
  reason_ = stop_reason::none;
}

bool round_controller::enough_time(const std::vector<round_series>& series) const {
  return std::all_of(series.begin(), series.end(), [&](const round_series& s) {
    if (!s.active) return true;
    return std::accumulate(s.pass_s->begin(), s.pass_s->end(), 0.0) >= policy_.min_time_s;
  });
}

bool round_controller::meets_target(const round_series& s, const round_series* baseline) const {
  if (!policy_.adaptive) return true;
  if (!(widths_.throughput(*s.pass_s) <= policy_.target)) return false;
  if (s.is_baseline || !baseline) return true;
  return widths_.speedup(*s.pass_s, *baseline->pass_s) <= policy_.target;
}

bool round_controller::another_round(int64_t rounds, const std::vector<round_series>& series) {
  const double t = now_();
  if (rounds > 0) longest_round_s_ = std::max(longest_round_s_, t - last_round_end_);
  last_round_end_ = t;
  const bool any = std::any_of(series.begin(), series.end(), [](const round_series& s) { return s.active; });
  if (!any) {
    reason_ = stop_reason::nothing_to_run;
    return false;
  }
  if (rounds >= policy_.max_repetitions) {
    reason_ = policy_.adaptive ? stop_reason::max_repetitions : stop_reason::fixed;
    return false;
  }
  if (!policy_.adaptive) {
    if (rounds < policy_.repetitions || !enough_time(series)) return true;
    reason_ = stop_reason::fixed;
    return false;
  }
  if (rounds < policy_.min_repetitions || !enough_time(series)) return true;
  // Only active variants are tested: one that failed part way has left the rotation, and its
  // verdict is FAIL, not a width.
  const round_series* baseline = nullptr;
  for (const auto& s : series)
    if (s.is_baseline && s.active) baseline = &s;
  const bool met = std::all_of(series.begin(), series.end(),
                               [&](const round_series& s) { return !s.active || meets_target(s, baseline); });
  if (met) {
    reason_ = stop_reason::target_met;
    return false;
  }
  // Start a round only when the budget predicts it can finish: the longest round so far is the
  // estimate (a round's length varies little once warm; the longest keeps the budget a bound).
  if (policy_.max_time_s > 0 && (t - started_) + longest_round_s_ > policy_.max_time_s) {
    reason_ = stop_reason::time_budget;
    return false;
  }
  return true;
}

}  // namespace attnbench
