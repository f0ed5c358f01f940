#include "runner/measurement_loop.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/cpu_info.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "config/byte_size.hpp"
#include "parallel/distributed_world.hpp"
#include "report/ceilings.hpp"
#include "runner/memory_cap.hpp"
#include "runner/pass_statistics.hpp"
#include "runner/resume_state.hpp"
#include "runner/timed_rounds.hpp"
#include "stats/summary.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {
namespace {

// What the loop keeps of one variant from its set-up to its statistics.
struct loop_variant {
  const variant_plan* plan = nullptr;  // its plan: precision label, dtype, tolerance
  variant_result result;
  bool ran = false;             // its check pass and every pass since succeeded
  std::vector<double> pass_s;   // timed passes
  std::vector<double> unit_ms;  // every unit of every timed pass
  std::size_t unit_base = 0;            // units kept from an interrupted run (--resume)
  std::vector<std::size_t> unit_ends;  // unit_ms's size after each timed pass of this process
};

void fail(variant_result& r, const std::string& why) {
  r.status = status_kind::fail;
  r.reason = why;
  r.check.status = status_kind::fail;
  r.check.message = why;
}

// The resource limits a variant's work runs under (README "What happens when things go wrong").
struct variant_limits {
  int64_t max_memory_bytes = 0;  // measure.max_memory_bytes: CPU allocations of one step (0: none)
  double max_pass_s = 0;         // measure.max_time_s when the config gives it: one pass's time (0: none)
};

// The variant hit a resource limit: not measured, not a wrong output.
void limit_hit(variant_result& r, status_kind s, const std::string& why) {
  r.status = s;
  r.reason = why;
  r.check.status = status_kind::skipped;
  r.check.message = "not checked: " + why;
}

// Runs `step` for one variant, under the memory cap. A step that fails fails its variant, not the
// run: out of memory (a CUDA OOM, a CPU allocation over measure.max_memory_bytes, std::bad_alloc)
// makes it OOM, any other error (a kernel error) FAIL, with `prefix` and the reason; the others
// go on so every report is written. A lost rank ends the whole run: the other ranks cannot go on
// without it.
template <typename Step>
bool guarded(variant_result& r, const std::string& prefix, const variant_limits& limits, Step&& step) {
  try {
    const memory_cap_scope cap(limits.max_memory_bytes);
    step();
    return true;
  } catch (const distributed_error&) {
    throw;
  } catch (const c10::OutOfMemoryError& e) {
    limit_hit(r, status_kind::oom, prefix + error_text(e));
  } catch (const std::bad_alloc&) {
    limit_hit(r, status_kind::oom, prefix + "out of memory (the system refused an allocation: std::bad_alloc)");
  } catch (const std::exception& e) {
    fail(r, prefix + error_text(e));
  }
  return false;
}

// After a pass that took `seconds`: whether it kept to measure.max_time_s; a pass longer than the
// whole budget cannot give a round within it, so the variant is TIMEOUT (a pass is never cut short).
bool within_time(variant_result& r, const variant_limits& limits, const char* which, double seconds) {
  if (limits.max_pass_s <= 0 || seconds <= limits.max_pass_s) return true;
  limit_hit(r, status_kind::timeout,
            fmt::format("its {} pass took {:.1f} s, more than measure.max_time_s ({:g} s): it cannot give one round "
                        "within the budget",
                        which, seconds, limits.max_pass_s));
  return false;
}

// The labels every scenario gives a variant, then why it does not run here, if it does not: the
// scenario's reasons first (they are the more specific), then a pending technique.
std::optional<skip_verdict> label_or_skip(const config& cfg, scenario_base& scenario, std::size_t i,
                                          const variant_plan& plan, variant_result& r) {
  const variant_config& vc = cfg.variants[i];
  r.name = vc.name;
  r.is_baseline = vc.name == cfg.baseline;
  r.precision = plan.precision.label;
  r.compute_dtype = plan.precision.dtype;
  // A custom variant shows its kernel (offline_scenario names the device's default once resolved).
  r.attention = vc.attention == attention_kind::custom && !vc.kernel.empty() ? vc.kernel : to_string(vc.attention);
  r.sdpa_backend = vc.attention == attention_kind::sdpa ? to_string(vc.backend) : "";
  if (auto skip = scenario.skip_reason(i, r)) return skip;
  if (vc.pending)
    return skip_verdict{*vc.pending, vc.description.empty() ? "not implemented yet" : vc.description};
  return std::nullopt;
}

// What the device a variant computes on changes about its precision, said beside it in every
// report: what "amp" became and why, the CPU features it lacks (never assumed: read from the
// environment's detected features), and a measured ceiling below fp32's.
void note_hardware(const environment_info& env, const variant_config& vc, const variant_plan& plan,
                   variant_result& r) {
  if (!vc.precision_choice.empty()) r.notes.push_back(vc.precision_choice);
  const std::string& dtype = plan.precision.dtype;
  if (env.device == "cpu") {
    cpu_info cpu;
    cpu.model_name = env.cpu_model;
    cpu.id = env.cpu_id;
    cpu.features = env.cpu_features;
    if (auto note = slow_dtype_note(cpu, dtype)) r.notes.push_back(*note);
  }
  // Measured, whatever the features say: reduced precision that multiplies slower than fp32.
  const double own = measured_ceiling(env, dtype), fp32 = measured_ceiling(env, "fp32");
  if (dtype != "fp32" && std::isfinite(own) && std::isfinite(fp32) && own < fp32)
    r.notes.push_back(fmt::format("warning: the measured {} matmul ceiling ({:.3g} GFLOP/s) is below fp32's "
                                  "({:.3g} GFLOP/s) on this device: {} costs time here",
                                  dtype, own, fp32, r.precision));
}

// A share of the ceiling above 100%: within the ceiling's own spread, the two are level; beyond it,
// the ceiling is not a ceiling, and that is a bug of the measurement (issue 37 part 4), said so.
std::string ceiling_exceeded_note(const environment_info& env, const variant_result& r, const std::string& dtype) {
  const matmul_ceiling* c = nullptr;
  for (const auto& e : env.ceilings)
    if (e.dtype == dtype) c = &e;
  const double spread = c && std::isfinite(c->spread) ? c->spread : 0.0;
  const std::string how =
      c ? fmt::format("the best of {} shapes ({} at the best, {} timed calls, spread {:.1f}%)", c->shapes.size(),
                      c->shape.empty() ? fmt::format("n = {}", c->size) : c->shape, c->repeats, spread * 100.0)
        : "not measured";
  if (ceiling_share_is_bug(r.ceiling_share, spread))
    return fmt::format("error: {:.1f} GFLOP/s is {:.1f}% of the measured {} ceiling ({}), beyond the ceiling's "
                       "spread: the ceiling is not a ceiling here (a bug of the measurement, not a variant faster "
                       "than the hardware); the share is not meaningful",
                       r.achieved_gflops, r.ceiling_share * 100.0, dtype, how);
  return fmt::format("note: {:.1f} GFLOP/s is {:.1f}% of the measured {} ceiling ({}): within the ceiling's spread, "
                     "read it as at the ceiling",
                     r.achieved_gflops, r.ceiling_share * 100.0, dtype, how);
}

// The interrupted run's row of a variant that left it by an error, when this run resumes it.
const variant_result* kept_row(const loop_resume* resume, const std::string& name) {
  if (!resume || !resume->from || !resume->prior) return nullptr;
  const variant_rounds* v = resume->from->find(name);
  if (!v || !v->left_by_error) return nullptr;
  for (const auto& r : resume->prior->variants)
    if (r.name == name) return &r;
  return nullptr;
}

// Skips or prepares every variant, then runs its untimed check pass.
// A signal stops it before the next variant (returned: where); the rest are SKIPPED as not run.
std::string set_up(const config& cfg, const environment_info& env, scenario_base& scenario,
                   std::vector<loop_variant>& variants, const loop_progress& progress, run_observer* observer,
                   const variant_limits& limits, bool may_stop, const loop_resume* resume) {
  int64_t checked = 0;
  std::string interrupted;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    variant_result& r = variants[i].result;
    if (const variant_result* kept = kept_row(resume, cfg.variants[i].name)) {
      r = *kept;  // left the interrupted run by an error: its row stands, it is not run again
      const std::string note = "kept from the interrupted run (--resume): not run again";
      if (std::find(r.notes.begin(), r.notes.end(), note) == r.notes.end()) r.notes.push_back(note);
      continue;
    }
    const int sig = may_stop ? interrupt_signal() : 0;
    if (sig && interrupted.empty())
      interrupted = fmt::format("{} during the check passes, before variant {} of {}", signal_name(sig), i + 1,
                                variants.size());
    if (!interrupted.empty()) {
      label_or_skip(cfg, scenario, i, *variants[i].plan, r);
      r.status = status_kind::skipped;
      r.reason = "not run: the run was interrupted (" + interrupted + ")";
      r.check.message = "not run";
      continue;
    }
    if (auto skip = label_or_skip(cfg, scenario, i, *variants[i].plan, r)) {
      r.status = status_kind::skipped;
      r.reason = skip->reason;
      r.description = skip->description;
      r.check.message = "not run";
      continue;
    }
    if (!guarded(r, "could not set up: ", limits, [&] { scenario.prepare(i, r); })) continue;
    note_hardware(env, cfg.variants[i], *variants[i].plan, r);
    progress("check", r.name, checked++, static_cast<int64_t>(variants.size()));
    const auto check_started = pass_clock::now();
    variants[i].ran = guarded(r, "could not run: ", limits, [&] { scenario.check_pass(i, r); }) &&
                      within_time(r, limits, "check", seconds_since(check_started));
    if (observer && variants[i].ran)
      observer->on_variant_ready(r.name, std::isnan(r.cache_hit_rate) ? -1 : r.cache_hit_rate,
                                 static_cast<double>(r.peak_memory_bytes));
    if (observer && variants[i].ran && r.train) observer->on_train_losses(r.name, r.train->losses);
  }
  return interrupted;
}

// Warm-up, then the timed rounds over every variant whose check pass ran; a pass that throws
// takes its variant out of the rotation.
rounds_outcome time_variants(const config& cfg, scenario_base& scenario, std::vector<loop_variant>& variants,
                             const loop_progress& progress, const std::function<bool(int64_t, bool)>& agree,
                             const workload_info& work, run_observer* observer, const variant_limits& limits,
                             bool may_stop, const rounds_state* from) {
  std::vector<round_member> members;
  std::vector<loop_variant*> member_of;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    loop_variant& v = variants[i];
    if (!v.ran) continue;
    round_member mb;
    mb.name = v.result.name;
    mb.is_baseline = v.result.is_baseline;
    if (from && from->rounds > 0) {  // resumed: the completed rounds' passes come first
      const variant_rounds* done = from->find(mb.name);
      if (!done || static_cast<int64_t>(done->pass_s.size()) != from->rounds)
        throw input_error("--resume", fmt::format("variant \"{}\" has {} timed passes in {}, not one per each of "
                                                  "its {} complete rounds: it cannot be resumed; run it afresh",
                                                  mb.name, done ? done->pass_s.size() : 0, resume_file_name,
                                                  from->rounds));
      mb.pass_s = done->pass_s;
      v.unit_ms = done->unit_ms;
      v.unit_base = v.unit_ms.size();
    }
    mb.pass = [&scenario, &v, i, &work, observer, &limits](pass_phase phase) -> std::optional<double> {
      const bool timed = phase == pass_phase::timed;
      pass_timing t;
      v.ran = guarded(v.result, fmt::format("failed during a {} pass: ", timed ? "timed" : "warm-up"), limits,
                      [&] { t = scenario.pass(i, phase); }) &&
              within_time(v.result, limits, timed ? "timed" : "warm-up", t.seconds);
      if (!v.ran) return std::nullopt;
      // After the pass's clock stopped: what an observer does costs the pass nothing.
      if (observer) observer->on_pass(v.result.name, timed, work.samples, work.real_tokens, t.seconds, t.unit_ms);
      if (timed) {
        v.unit_ms.insert(v.unit_ms.end(), t.unit_ms.begin(), t.unit_ms.end());
        v.unit_ends.push_back(v.unit_ms.size());
      }
      return t.seconds;
    };
    members.push_back(std::move(mb));
    member_of.push_back(&v);
  }
  const rounds_outcome rounds = run_rounds(cfg.measure, members, progress, agree, may_stop,
                                          from ? from->rounds : 0, from ? from->timed_s : 0);
  for (std::size_t k = 0; k < members.size(); ++k) {
    loop_variant& v = *member_of[k];
    // A round cut short by a signal is dropped: its pass's units go too, so the latencies are of
    // the kept rounds only.
    const std::size_t kept_before = from && from->rounds > 0 ? static_cast<std::size_t>(from->rounds) : 0;
    v.pass_s = std::move(members[k].pass_s);
    const std::size_t kept_here = v.pass_s.size() - std::min(v.pass_s.size(), kept_before);
    if (kept_here < v.unit_ends.size()) v.unit_ms.resize(kept_here == 0 ? v.unit_base : v.unit_ends[kept_here - 1]);
  }
  return rounds;
}

// Throughput, speedup, latency percentiles and achieved GFLOP/s of a variant that ran. Rates count
// what a pass serves: every sample and its real tokens, repeats included.
void summarize_variant(const run_result& res, loop_variant& v, const std::vector<double>& base_samples_per_s,
                       bool base_ran) {
  variant_result& r = v.result;
  const auto samples = static_cast<double>(res.workload.samples);
  summarize_passes(r, v.pass_s, samples, static_cast<double>(res.workload.real_tokens), base_samples_per_s,
                   base_ran);
  r.latency_ms =
      latency_summary{percentile(v.unit_ms, 50), percentile(v.unit_ms, 90), percentile(v.unit_ms, 99)};
  r.achieved_gflops = r.flops_per_pass * r.throughput.geomean / samples / 1e9;
  const std::string& dtype = v.plan->precision.dtype;
  r.ceiling_share = r.achieved_gflops / measured_ceiling(res.environment, dtype);
  if (r.ceiling_share > 1.0) r.notes.push_back(ceiling_exceeded_note(res.environment, r, dtype));
}

// The statistics, the check against the baseline and the status of every variant that ran,
// then every variant's result in the config's order. The baseline's rates come first: every
// speedup is against them, wherever the baseline stands in the config.
void check_and_report(const config& cfg, scenario_base& scenario, std::vector<loop_variant>& variants,
                      run_result& res) {
  const auto base_at = static_cast<std::size_t>(
      std::find_if(cfg.variants.begin(), cfg.variants.end(),
                   [&](const variant_config& vc) { return vc.name == cfg.baseline; }) -
      cfg.variants.begin());
  const bool base_ran = variants[base_at].ran;
  const std::vector<double> base_samples_per_s =
      per_second(variants[base_at].pass_s, static_cast<double>(res.workload.samples));
  for (std::size_t i = 0; i < variants.size(); ++i) {
    loop_variant& v = variants[i];
    variant_result& r = v.result;
    if (v.ran) {
      summarize_variant(res, v, base_samples_per_s, base_ran);
      if (base_ran) {
        r.check = scenario.check(i, base_at, v.plan->precision.tolerance, r);
        r.check.random_weights = res.check.random_weights;
      } else {
        r.check.status = status_kind::fail;
        r.check.message = "the baseline could not run, so nothing can be checked";
      }
      r.status = r.check.status;
      if (r.status == status_kind::fail) r.reason = r.check.message;
      scenario.finalize(i, base_ran ? std::optional<std::size_t>(base_at) : std::nullopt, r);
    }
    res.variants.push_back(std::move(r));
  }
}

// What `run --resume` needs to go on from here (runner/resume_state.hpp): every variant's timed
// passes of the complete rounds, and which left the run by an error (their rows stand as they are).
void save_rounds(const std::vector<loop_variant>& variants, const run_result& res, const rounds_outcome& rounds,
                 loop_resume& resume) {
  const rounds_state* from = resume.from;
  rounds_state& s = *resume.save;
  s = rounds_state{};
  s.rounds = rounds.rounds;
  s.timed_s = rounds.timed_s;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const variant_result& r = res.variants[i];
    variant_rounds v;
    v.name = r.name;
    v.left_by_error = !variants[i].ran && (r.status == status_kind::fail || r.status == status_kind::oom ||
                                           r.status == status_kind::timeout);
    v.pass_s = variants[i].pass_s;
    v.unit_ms = variants[i].unit_ms;
    // Stopped again before its rounds went on (in the check passes): the kept rounds still stand.
    if (const variant_rounds* before = from ? from->find(v.name) : nullptr; before && v.pass_s.empty()) {
      v.pass_s = before->pass_s;
      v.unit_ms = before->unit_ms;
      v.left_by_error = v.left_by_error || before->left_by_error;
    }
    s.variants.push_back(std::move(v));
  }
  resume.saved = true;
}

}  // namespace

double seconds_since(pass_clock::time_point t0) {
  return std::chrono::duration<double>(pass_clock::now() - t0).count();
}

std::string error_text(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  return c10_error ? c10_error->what_without_backtrace() : e.what();
}

bool measure_variants(const config& cfg, const std::vector<variant_plan>& plans, scenario_base& scenario,
                      run_result& res, const loop_progress& progress,
                      const std::function<bool(int64_t, bool)>& agree, run_observer* observer,
                      bool single_process, loop_resume* resume) {
  const rounds_state* from = resume ? resume->from : nullptr;
  if (plans.size() != cfg.variants.size())
    throw std::logic_error(
        fmt::format("measure_variants: {} plans for {} variants", plans.size(), cfg.variants.size()));
  std::vector<loop_variant> variants(cfg.variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) variants[i].plan = &plans[i];
  variant_limits limits;
  limits.max_memory_bytes = max_memory_bytes(cfg);
  limits.max_pass_s = explicit_max_time_s(cfg);
  const std::string stopped_in_set_up =
      set_up(cfg, res.environment, scenario, variants, progress, observer, limits, single_process, resume);
  rounds_outcome rounds;
  if (stopped_in_set_up.empty())
    rounds = time_variants(cfg, scenario, variants, progress, agree, res.workload, observer, limits, single_process,
                           from);
  else if (from) {  // stopped again before timing: the kept rounds still stand
    rounds.rounds = from->rounds;
    rounds.timed_s = from->timed_s;
  }
  if (!scenario.end_of_passes()) return false;
  check_and_report(cfg, scenario, variants, res);
  record_repetitions(cfg.measure, rounds, res);
  std::string interrupted = !stopped_in_set_up.empty() ? stopped_in_set_up : rounds.interrupted;
  // After the rounds: a signal during the checks or the server rates (which say where in a note).
  if (interrupted.empty() && single_process && interrupt_signal())
    interrupted = signal_name(interrupt_signal()) + " after the timed rounds (what did not run says so in a note)";
  if (!interrupted.empty()) {
    res.complete = false;
    res.incomplete_reason = "interrupted by " + interrupted;
    res.stop_reason = "interrupted";
    for (auto& r : res.variants)
      if (r.status == status_kind::pass && r.repetition.rounds < 2)
        r.notes.push_back(fmt::format("interrupted after {} timed round{}: too few for an interval",
                                      r.repetition.rounds, r.repetition.rounds == 1 ? "" : "s"));
    if (resume && resume->save) save_rounds(variants, res, rounds, *resume);
  }
  return true;
}

}  // namespace attnbench
