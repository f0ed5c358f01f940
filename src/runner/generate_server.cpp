#include "runner/generate_server.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "stats/summary.hpp"
#include "workload/arrivals.hpp"
#include "workload/load_generator.hpp"

namespace attnbench {
namespace {

// Past the last arrival, a rate may take this long to finish its requests before the rest is
// dropped (and the rate counted as not sustainable): bounds a rate far past capacity.
constexpr double drain_limit_s = 30;

struct rate_served {
  std::vector<generated_sequence> done;
  int64_t arrivals = 0;
  double first_arrival_s = 0;
  int64_t steps = 0, step_rows = 0;
};

rate_served serve_rate(const dataset& data, const std::string& variant, DecoderLM& model, torch::Device device,
                       const generation_engine::settings& es, const std::vector<arrival>& arrivals,
                       run_observer* observer) {
  rate_served out;
  out.arrivals = static_cast<int64_t>(arrivals.size());
  out.first_arrival_s = arrivals.empty() ? 0 : arrivals.front().t_s;
  const double last_arrival = arrivals.empty() ? 0 : arrivals.back().t_s;
  const auto t0 = load_clock::now();
  const auto clock = [t0] { return std::chrono::duration<double>(load_clock::now() - t0).count(); };
  generation_engine engine(model, data, device, es, clock);
  std::deque<generation_request> waiting;
  std::size_t reported = 0;
  load_generator load(arrivals, data, t0);
  std::unique_lock<std::mutex> lock(load.mutex);
  while (true) {
    while (!load.inbox.empty()) {
      const queued_request q = load.inbox.front();
      load.inbox.pop_front();
      waiting.push_back({q.id, q.sample, q.arrival_s});
    }
    const bool drained = load.all_arrived && load.inbox.empty();
    if (drained && waiting.empty() && engine.idle()) break;
    if (clock() > last_arrival + drain_limit_s) break;  // overloaded: drop the rest
    if (engine.idle() && waiting.empty()) {
      load.wake.wait(lock, [&] { return !load.inbox.empty() || load.all_arrived; });
      continue;
    }
    lock.unlock();
    // At a step boundary: admit what the engine takes, then one decode step of every running sequence.
    while (!waiting.empty() && engine.can_admit(waiting.front().sample)) {
      engine.admit(waiting.front());
      waiting.pop_front();
    }
    engine.step();
    if (observer)
      for (; reported < engine.finished.size(); ++reported) {
        const auto& g = engine.finished[reported];
        observer->on_server_request(variant, g.token_s.back() - g.arrival_s, /*cached=*/false);
      }
    lock.lock();
  }
  lock.unlock();
  out.steps = engine.totals.steps;
  out.step_rows = engine.totals.decode_tokens;
  out.done = std::move(engine.finished);
  return out;  // ~load_generator stops and joins the load thread (here, or while unwinding)
}

server_point summarize(const rate_served& run, double offered, double bound_ms) {
  server_point p;
  p.offered_rate = offered;
  p.requests = static_cast<int64_t>(run.done.size());
  std::vector<double> e2e, ttft, itl;
  double last = run.first_arrival_s;
  int64_t tokens = 0;
  for (const auto& g : run.done) {
    e2e.push_back((g.token_s.back() - g.arrival_s) * 1e3);
    ttft.push_back((g.token_s.front() - g.arrival_s) * 1e3);
    for (std::size_t k = 1; k < g.token_s.size(); ++k) itl.push_back((g.token_s[k] - g.token_s[k - 1]) * 1e3);
    last = std::max(last, g.token_s.back());
    tokens += static_cast<int64_t>(g.token_s.size());
  }
  p.p50_ms = percentile(e2e, 50);
  p.p90_ms = percentile(e2e, 90);
  p.p99_ms = percentile(e2e, 99);
  p.p999_ms = percentile(e2e, 99.9);
  p.ttft_p50_ms = percentile(ttft, 50);
  p.ttft_p99_ms = percentile(ttft, 99);
  p.itl_p50_ms = itl.empty() ? not_a_number : percentile(itl, 50);
  p.itl_p99_ms = itl.empty() ? not_a_number : percentile(itl, 99);
  const double span = last - run.first_arrival_s;
  p.achieved_rate = span > 0 ? static_cast<double>(p.requests) / span : not_a_number;
  p.output_tokens_per_s = span > 0 ? static_cast<double>(tokens) / span : not_a_number;
  p.mean_batch_size =
      run.steps > 0 ? static_cast<double>(run.step_rows) / static_cast<double>(run.steps) : not_a_number;
  p.within_bound = p.requests == run.arrivals && p.ttft_p99_ms <= bound_ms;
  return p;
}

}  // namespace

generate_server_sweep run_generate_server(const config& cfg, const dataset& data, const std::string& variant,
                                          DecoderLM& model, torch::Device device,
                                          const generation_engine::settings& engine,
                                          const torch::Tensor& baseline_tokens, run_observer* observer) {
  const auto n = static_cast<int64_t>(data.samples.size());
  const server_config& sc = cfg.server;
  std::vector<std::pair<double, std::vector<arrival>>> runs;  // offered rate (NaN: trace), arrivals
  if (!sc.trace.empty())
    runs.emplace_back(not_a_number, read_trace(sc.trace, n));
  else
    for (double rate : sc.rates) runs.emplace_back(rate, poisson_arrivals(rate, sc.requests, sc.max_time_s, sc.seed, n));
  // Untimed: the first prompts once through the engine, so first-time kernel selection and
  // allocation do not land in the first rate's latencies.
  {
    generation_engine warm(model, data, device, engine, [] { return 0.0; });
    std::vector<generation_request> first;
    for (int64_t i = 0; i < std::min<int64_t>(n, 2 * engine.slots); ++i) first.push_back({i, i, 0.0});
    generate_all(warm, first);
  }
  generate_server_sweep sweep;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto& [rate, arrivals] = runs[k];
    if (const int sig = interrupt_signal()) {
      sweep.interrupted = fmt::format("{} before rate {} of {} ({} req/s): it and the rates after it did not run",
                                      signal_name(sig), k + 1, runs.size(), rate);
      break;
    }
    if (observer) observer->on_server_rate(variant, rate);
    const rate_served run = serve_rate(data, variant, model, device, engine, arrivals, observer);
    const server_point p = summarize(run, rate, sc.latency_bound_ms);
    if (observer) observer->on_server_point(variant, rate, p.p50_ms, p.p90_ms, p.p99_ms, p.achieved_rate);
    if (p.within_bound && !std::isnan(rate)) sweep.max_sustainable_rate = rate;
    sweep.points.push_back(p);
    for (const auto& g : run.done) {
      ++sweep.served;
      const auto ref = baseline_tokens[g.sample];
      const auto differs = g.tokens.ne(ref).nonzero();
      if (differs.numel() == 0) {
        ++sweep.identical;
      } else if (sweep.divergences.size() < 5) {
        sweep.divergences.emplace_back(g.sample, differs[0][0].item<int64_t>());
      }
    }
  }
  return sweep;
}

}  // namespace attnbench
