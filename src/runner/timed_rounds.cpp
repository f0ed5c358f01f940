#include "runner/timed_rounds.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "runner/pass_statistics.hpp"
#include "stats/summary.hpp"

namespace attnbench {
namespace {

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

repetition_policy policy_of(const measure_config& m) {
  repetition_policy p;
  p.adaptive = m.adaptive;
  p.repetitions = m.repetitions;
  p.min_repetitions = m.min_repetitions;
  p.max_repetitions = m.max_repetitions;
  p.max_time_s = m.max_time_s;
  p.min_time_s = m.min_time_s;
  p.target = m.target_rel_half_width;
  return p;
}

interval_widths report_interval_widths() {
  interval_widths w;
  // Rates per pass of one unit: the relative width does not depend on the amount per pass.
  w.throughput = [](const std::vector<double>& pass_s) {
    return summarize(per_second(pass_s, 1.0)).relative_half_width();
  };
  w.speedup = [](const std::vector<double>& pass_s, const std::vector<double>& base_pass_s) {
    return speedup_of(per_second(pass_s, 1.0), per_second(base_pass_s, 1.0)).relative_half_width();
  };
  return w;
}

rounds_outcome run_rounds(
    const measure_config& m, std::vector<round_member>& members,
    const std::function<void(const std::string&, const std::string&, int64_t, int64_t)>& progress,
    const std::function<bool(int64_t, bool)>& agree, bool stop_between_passes) {
  const auto n = static_cast<int64_t>(members.size());
  rounds_outcome out;
  for (int64_t w = 0; w < m.warmup; ++w)
    for (int64_t i = 0; i < n; ++i) {
      round_member& mb = members[static_cast<std::size_t>(i)];
      if (!mb.active) continue;
      if (const int sig = interrupt_signal(); sig && stop_between_passes) {
        out.interrupted = fmt::format("{} during warm-up (pass {} of {}), before any timed round", signal_name(sig),
                                      w * n + i + 1, m.warmup * n);
        return out;
      }
      progress("warmup", mb.name, w * n + i, m.warmup * n);
      if (!mb.pass(pass_phase::warmup)) mb.active = false;
    }

  round_controller controller(policy_of(m), report_interval_widths(), monotonic_seconds);
  std::vector<round_series> series(members.size());
  const auto refresh = [&] {
    for (std::size_t i = 0; i < members.size(); ++i)
      series[i] = round_series{&members[i].pass_s, members[i].active, members[i].is_baseline};
  };
  // The planned count the progress line shows: the fixed rounds, or the adaptive minimum.
  const int64_t planned = m.adaptive ? m.min_repetitions : m.repetitions;
  controller.start();
  for (;;) {
    refresh();
    const bool more = controller.another_round(out.rounds, series);
    const int sig = interrupt_signal();
    if (!agree(out.rounds, more && sig == 0)) {
      if (sig != 0 && more)
        out.interrupted = fmt::format("{} after {} timed round{}", signal_name(sig), out.rounds,
                                      out.rounds == 1 ? "" : "s");
      break;
    }
    // Every other round runs the variants in reverse (A B C, C B A, …): a drift that grows
    // through a round then favours no variant's position over the run.
    const bool reverse = out.rounds % 2 == 1;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = reverse ? n - 1 - k : k;
      round_member& mb = members[static_cast<std::size_t>(i)];
      progress("timed", mb.name, out.rounds * n + k, std::max(out.rounds + 1, planned) * n);
      if (!mb.active) continue;
      if (const int sig2 = interrupt_signal(); sig2 && stop_between_passes) {
        // The round is cut short: its passes so far are dropped, so every round stays paired.
        for (int64_t d = 0; d < k; ++d) {
          round_member& done = members[static_cast<std::size_t>(reverse ? n - 1 - d : d)];
          if (done.active && static_cast<int64_t>(done.pass_s.size()) > out.rounds) done.pass_s.pop_back();
        }
        out.interrupted = fmt::format("{} during timed round {} (its passes dropped; {} complete round{} kept)",
                                      signal_name(sig2), out.rounds + 1, out.rounds, out.rounds == 1 ? "" : "s");
        out.reason = stop_reason::none;
        return out;
      }
      const auto seconds = mb.pass(pass_phase::timed);
      if (!seconds) {
        mb.active = false;
        continue;
      }
      mb.pass_s.push_back(*seconds);
    }
    ++out.rounds;
  }
  out.reason = controller.reason();
  return out;
}

void record_repetitions(const measure_config& m, const rounds_outcome& o, run_result& res) {
  res.repetitions = o.rounds;
  res.repetition_mode = m.adaptive ? "adaptive" : "fixed";
  res.target_rel_half_width = m.adaptive ? m.target_rel_half_width : not_a_number;
  res.max_time_s = m.adaptive && m.max_time_s > 0 ? m.max_time_s : not_a_number;
  res.stop_reason = to_string(o.reason);
  for (auto& r : res.variants) {
    if (r.throughput.n == 0) continue;  // skipped, or failed before a timed pass
    repetition_info& info = r.repetition;
    info.rounds = r.throughput.n;
    info.throughput_rel_half_width = r.throughput.relative_half_width();
    if (!r.is_baseline) info.speedup_rel_half_width = r.speedup.relative_half_width();
    if (m.adaptive) {
      info.target_met = info.throughput_rel_half_width <= m.target_rel_half_width &&
                        (r.is_baseline || info.speedup_rel_half_width <= m.target_rel_half_width);
      info.noisy = !info.target_met;
    }
  }
}

}  // namespace attnbench
