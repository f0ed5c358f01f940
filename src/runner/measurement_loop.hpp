// The one measurement loop every scenario shares (offline inference, server, training, the
// parallel paths): each variant is skipped with a reason or prepared, runs an untimed check pass,
// then warm-up and interleaved timed rounds (runner/timed_rounds.hpp); its statistics, its check
// against the baseline and its status follow, the same for every scenario. A scenario
// (scenario_base) says what a variant's pass is and how its results are checked; the loop decides
// when to run it, how to time it and what a failure does to the variant.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/executor.hpp"
#include "core/run_observer.hpp"
#include "report/result.hpp"
#include "runner/resume_state.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {

// Why a variant does not run here, and how the reports describe it.
struct skip_verdict {
  std::string reason;
  std::string description;
};

// One pass as the scenario timed it.
struct pass_timing {
  double seconds = 0;           // the whole pass
  std::vector<double> unit_ms;  // each unit of work in it: a batch, or a training step
};

// A scenario, as the loop sees it. Variants are named by their index in cfg.variants. Every
// method but skip_reason may throw: the loop turns the error into the variant's FAIL (a
// distributed_error, a lost rank, ends the whole run instead).
class scenario_base {
 public:
  virtual ~scenario_base() = default;
  // Why the scenario cannot run variant i here, or nullopt. Called first, on r with the loop's
  // labels (name, precision, attention): the scenario may relabel it (a TorchScript model's
  // attention is its own). The loop skips pending variants itself, after this.
  virtual std::optional<skip_verdict> skip_reason(std::size_t i, variant_result& r) = 0;
  // Builds what the variant runs (batches, executor or model) and records the per-pass work in r
  // (batches, tokens, FLOPs, description). Nothing is timed yet.
  virtual void prepare(std::size_t i, variant_result& r) = 0;
  // The untimed first pass: keeps what check() compares and records the peak memory in r.
  virtual void check_pass(std::size_t i, variant_result& r) = 0;
  // One warm-up or timed pass.
  virtual pass_timing pass(std::size_t i, pass_phase phase) = 0;
  // Called once every pass of every variant is done. Returns whether this process reports the
  // results (false on a rank other than 0 of a multi-process run: rank 0 reports for everyone).
  virtual bool end_of_passes() { return true; }
  // Variant i's check-pass results against the baseline's (index base); tolerance from the
  // variant's precision. Only called when both ran every pass. May fill check figures into r.
  virtual check_result check(std::size_t i, std::size_t base, double tolerance, variant_result& r) = 0;
  // Adds what only the scenario knows to a variant that ran every pass, after its statistics and
  // status (executors' own figures, the server sweep). base: the baseline, when it ran.
  virtual void finalize(std::size_t /*i*/, std::optional<std::size_t> /*base*/, variant_result& /*r*/) {}
};

// `progress(phase, variant, done, total)`, as run_rounds reports it.
using loop_progress =
    std::function<void(const std::string& phase, const std::string& variant, int64_t done, int64_t total)>;

// Runs every variant of cfg through the scenario and appends their results to res.variants (in
// cfg's order) with the run's repetition record; res.workload must be filled in (the statistics
// count its samples and tokens per pass) and res.environment (the matmul ceilings). `agree`: as
// for run_rounds. Returns false, with nothing appended, where end_of_passes() said this process
// does not report. observer (may be null): told of each check pass and each warm-up or timed pass.
// A signal (common/interrupt.hpp) stops the loop at the next pass boundary (between rounds only,
// through `agree`, unless `single_process`); the variants' results are then what was measured, and
// res.complete is false with the reason. measure.max_memory_bytes and measure.max_time_s make a
// variant OOM or TIMEOUT instead of FAIL (README "What happens when things go wrong").
// plans: cfg's variants' (techniques/variant_plan.hpp), in cfg's order: they give each row its
// precision label, compute dtype (its ceiling) and tolerance.
bool measure_variants(const config& cfg, const std::vector<variant_plan>& plans, scenario_base& scenario,
                      run_result& res, const loop_progress& progress,
                      const std::function<bool(int64_t, bool)>& agree, run_observer* observer = nullptr,
                      bool single_process = true, loop_resume* resume = nullptr);

// The clock scenarios time their passes with (monotonic), and the seconds from t0 to now on it.
using pass_clock = std::chrono::steady_clock;
double seconds_since(pass_clock::time_point t0);

// An exception's message as a variant's reason quotes it: LibTorch's without its backtrace.
std::string error_text(const std::exception& e);

}  // namespace attnbench
