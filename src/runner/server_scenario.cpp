#include "runner/server_scenario.hpp"

#include "common/interrupt.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "check/output_check.hpp"
#include "core/device.hpp"
#include "stats/summary.hpp"
#include "workload/arrivals.hpp"
#include "workload/batcher.hpp"
#include "workload/batching_base.hpp"
#include "workload/load_generator.hpp"
#include "workload/result_cache.hpp"

namespace attnbench {
namespace {

using clock_type = load_clock;

// Past the last arrival, a run may take this long to drain its queue before the rest is dropped
// (and the rate counted as not sustainable): bounds a run whose rate far exceeds capacity.
constexpr double drain_limit_s = 30;
// Requests in the untimed warm-up before a variant's sweep: a few batches of typical shapes.
constexpr int64_t warmup_requests = 64;

struct served {
  int64_t sample = 0;
  double latency_s = 0;
  torch::Tensor logits;  // (C)
};

struct rate_run {
  std::vector<served> requests;
  int64_t arrivals = 0;
  int64_t batches = 0;
  int64_t computed = 0;  // requests that went through a batch (not the cache)
  double first_arrival_s = 0;
  double last_completion_s = 0;
};

// One offered rate (or the trace): the load thread (workload/load_generator.hpp) delivers arrivals
// into an inbox; this thread batches and runs them until every arrival is served or the drain
// limit passes. observer (may be null): told of each batch and each completed request, outside the clock's
// spans that matter (between batches).
rate_run run_rate(const config& cfg, const dataset& data, const variant_config& variant, executor_base& executor,
                  input_assembler& assembler, const std::vector<arrival>& arrivals, run_observer* observer) {
  rate_run out;
  out.arrivals = static_cast<int64_t>(arrivals.size());
  const auto t0 = clock_type::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(clock_type::now() - t0).count(); };
  batcher queue(variant.batching, cfg.workload.max_length);
  result_cache cache;
  std::vector<torch::Tensor> logits_of(arrivals.size());
  const double last_arrival = arrivals.empty() ? 0 : arrivals.back().t_s;
  out.first_arrival_s = arrivals.empty() ? 0 : arrivals.front().t_s;

  load_generator load(arrivals, data, t0);
  std::mutex& mutex = load.mutex;
  std::condition_variable& wake = load.wake;
  std::deque<queued_request>& inbox = load.inbox;
  const bool& all_arrived = load.all_arrived;
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    while (!inbox.empty()) {
      const queued_request r = inbox.front();
      inbox.pop_front();
      if (variant.batching.cache) {
        const auto& tokens = data.samples[static_cast<std::size_t>(r.sample)];
        const auto first = cache.find_or_insert(tokens, r.id);
        if (first && logits_of[static_cast<std::size_t>(*first)].defined()) {  // computed already: answer now
          logits_of[static_cast<std::size_t>(r.id)] = logits_of[static_cast<std::size_t>(*first)];
          const double now = elapsed();
          out.requests.push_back({r.sample, now - r.arrival_s, logits_of[static_cast<std::size_t>(r.id)]});
          out.last_completion_s = now;
          if (observer) observer->on_server_request(variant.name, now - r.arrival_s, /*cached=*/true);
          continue;
        }
      }
      queue.push(r);
    }
    const bool drained = all_arrived && inbox.empty();
    if (drained && queue.size() == 0) break;
    if (elapsed() > last_arrival + drain_limit_s) break;  // overloaded: drop the rest
    auto formed = queue.poll(elapsed(), /*flush=*/drained);
    if (!formed) {
      if (auto deadline = queue.deadline()) {
        wake.wait_until(lock, load_time(t0, *deadline));
      } else {
        wake.wait(lock, [&] { return !inbox.empty() || all_arrived; });
      }
      continue;
    }
    if (observer)
      observer->on_server_batch(variant.name, static_cast<int64_t>(formed->requests.size()),
                                static_cast<int64_t>(queue.size() + inbox.size()));
    lock.unlock();
    batch_plan plan;
    plan.padded_length = formed->padded_length;
    for (const auto& r : formed->requests) plan.rows.push_back(r.sample);
    const batch b = assembler.assemble(plan);
    const torch::Tensor logits = executor.forward(b).to(torch::kCPU);  // waits for the device
    const double done = elapsed();
    for (std::size_t k = 0; k < formed->requests.size(); ++k) {
      const auto& r = formed->requests[k];
      logits_of[static_cast<std::size_t>(r.id)] = logits[static_cast<int64_t>(k)];
      out.requests.push_back({r.sample, done - r.arrival_s, logits[static_cast<int64_t>(k)]});
      if (observer) observer->on_server_request(variant.name, done - r.arrival_s, /*cached=*/false);
    }
    out.last_completion_s = done;
    ++out.batches;
    out.computed += static_cast<int64_t>(formed->requests.size());
    lock.lock();
  }
  lock.unlock();
  return out;  // ~load_generator stops and joins the load thread (here, or while unwinding)
}

server_point summarize_rate(const rate_run& run, double offered, double bound_ms) {
  server_point p;
  p.offered_rate = offered;
  p.requests = static_cast<int64_t>(run.requests.size());
  std::vector<double> ms;
  for (const auto& r : run.requests) ms.push_back(r.latency_s * 1e3);
  p.p50_ms = percentile(ms, 50);
  p.p90_ms = percentile(ms, 90);
  p.p99_ms = percentile(ms, 99);
  p.p999_ms = percentile(ms, 99.9);
  const double span = run.last_completion_s - run.first_arrival_s;
  p.achieved_rate = span > 0 ? static_cast<double>(p.requests) / span : not_a_number;
  p.mean_batch_size = run.batches > 0 ? static_cast<double>(run.computed) / static_cast<double>(run.batches) : not_a_number;
  p.within_bound = p.requests == run.arrivals && p.p99_ms <= bound_ms;
  return p;
}

}  // namespace

server_sweep run_server_sweep(const config& cfg, const dataset& data, const variant_config& variant,
                              const variant_plan& plan, executor_base& executor, torch::Device device,
                              const torch::Tensor& baseline_outputs,
                              const std::function<void(const std::string&, int64_t, int64_t)>& progress,
                              run_observer* observer, const evidence_source& study) {
  const auto n = static_cast<int64_t>(data.samples.size());
  const server_config& sc = cfg.server;
  std::vector<std::pair<double, std::vector<arrival>>> runs;  // offered rate (NaN: trace), arrivals
  if (!sc.trace.empty()) {
    runs.emplace_back(not_a_number, read_trace(sc.trace, n));
  } else {
    for (double rate : sc.rates) runs.emplace_back(rate, poisson_arrivals(rate, sc.requests, sc.max_time_s, sc.seed, n));
  }
  // One assembler for the whole sweep, warmed with one untimed pass over the first samples in
  // the batches this batcher forms, so first-time kernel selection and buffer allocation do not
  // land in the first rate's latencies.
  input_assembler assembler(data, device, variant.batching.pool);
  {
    batcher warm(variant.batching, cfg.workload.max_length);
    for (int64_t i = 0; i < std::min<int64_t>(n, warmup_requests); ++i)
      warm.push({i, i, static_cast<int64_t>(data.samples[static_cast<std::size_t>(i)].size()), 0.0});
    while (auto formed = warm.poll(0.0, /*flush=*/true)) {
      batch_plan plan;
      plan.padded_length = formed->padded_length;
      for (const auto& r : formed->requests) plan.rows.push_back(r.sample);
      executor.forward(assembler.assemble(plan));
    }
    synchronize(device);
  }
  server_sweep sweep;
  std::vector<torch::Tensor> outs, refs;
  std::vector<int64_t> served;  // the sample of each served request, in order
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& [rate, arrivals] = runs[k];
    if (const int sig = interrupt_signal()) {
      sweep.interrupted = fmt::format("{} before rate {} of {} ({} req/s): it and the rates after it did not run",
                                      signal_name(sig), k + 1, runs.size(), rate);
      break;
    }
    if (progress) progress(fmt::format("{} @ {} req/s", variant.name, rate), static_cast<int64_t>(k), static_cast<int64_t>(runs.size()));
    if (observer) observer->on_server_rate(variant.name, rate);
    const rate_run run = run_rate(cfg, data, variant, executor, assembler, arrivals, observer);
    server_point p = summarize_rate(run, rate, sc.latency_bound_ms);
    if (observer) observer->on_server_point(variant.name, rate, p.p50_ms, p.p90_ms, p.p99_ms, p.achieved_rate);
    if (p.within_bound && !std::isnan(rate)) sweep.max_sustainable_rate = rate;
    sweep.points.push_back(p);
    for (const auto& r : run.requests) {
      outs.push_back(r.logits);
      refs.push_back(baseline_outputs[r.sample]);
      served.push_back(r.sample);
    }
  }
  // The variant's own tolerance (an int8 or cast variant's, not fp32's), as its offline check used.
  const double tol = plan.precision.tolerance;
  if (outs.empty()) {
    sweep.check.status = status_kind::fail;
    sweep.check.message = "the server scenario served no request";
  } else {
    // The study's rows for the served requests, in their order (a sample may be served at several rates).
    const evidence_source per_request = [&]() -> std::shared_ptr<const decision_evidence> {
      auto whole = study ? study() : nullptr;
      if (!whole || !whole->unavailable.empty()) return whole;
      auto rows = std::make_shared<decision_evidence>();
      const auto idx = torch::tensor(served, torch::kLong);
      rows->precision_class = whole->precision_class;
      rows->reference = whole->reference.index_select(0, idx);
      for (const auto& p : whole->perturbed) rows->perturbed.push_back(p.index_select(0, idx));
      return rows;
    };
    sweep.check = compare_outputs(torch::stack(outs), torch::stack(refs), tol,
                                  output_kind_of(cfg.model, refs.front().size(-1)), per_request);
  }
  return sweep;
}

}  // namespace attnbench
