// Generation in the server scenario (vLLM's benchmark_serving, on attnbench's clock): requests
// arrive by the server block's seeded Poisson process at each offered rate (or a trace); the load
// thread (workload/load_generator.hpp) delivers them and the serving thread runs a
// generation_engine (runner/generate_engine.hpp): continuous batching for a variant whose batching
// is "dynamic", static batches of batching.batch_size otherwise (admitted together while no batch
// runs, run to the end).
//
// Per rate, over the served requests:
//   - time to first token (TTFT): first token − arrival, queueing included, p50 and p99;
//   - inter-token latency (ITL): the gaps between a request's consecutive tokens, pooled, p50 and
//     p99 (a step that waited for another request's prefill shows here);
//   - end-to-end latency (last token − arrival) p50/p90/p99/p99.9, achieved requests/s and output
//     tokens/s (completions and tokens over last completion − first arrival);
//   - mean sequences per decode step.
// A rate is within the bound when every arrival was served and its TTFT p99 ≤ latency_bound_ms.
// Every served request's tokens are checked against the baseline's tokens for its prompt from the
// generate scenario's check pass: a request that generated other tokens fails the variant.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/run_observer.hpp"
#include "model/decoder.hpp"
#include "report/result.hpp"
#include "runner/generate_engine.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

struct generate_server_sweep {
  std::vector<server_point> points;
  double max_sustainable_rate = not_a_number;
  int64_t served = 0;
  int64_t identical = 0;                           // served requests whose tokens equal the baseline's
  std::vector<std::pair<int64_t, int64_t>> divergences;  // (sample, first differing step), at most 5
  std::string interrupted;  // a signal stopped the sweep before these rates ran; "" when all ran
};

// model: the variant's, set to its attention, under the caller's autocast scope; baseline_tokens
// (N, max_new_tokens) int64 on the CPU, row = sample.
generate_server_sweep run_generate_server(const config& cfg, const dataset& data, const std::string& variant,
                                          DecoderLM& model, torch::Device device,
                                          const generation_engine::settings& engine,
                                          const torch::Tensor& baseline_tokens, run_observer* observer);

}  // namespace attnbench
