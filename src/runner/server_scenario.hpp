// The server scenario (MLPerf's "Server", Triton's perf_analyzer): requests arrive over time by
// a seeded Poisson process at each offered rate (or replay a trace); a load thread delivers them
// on a monotonic clock, the variant's batcher groups them, and each request's latency is its
// completion minus its arrival — queueing and compute together. A rate sweep finds the highest
// rate whose p99 stays under the latency bound. Every run is bounded in requests and time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "check/output_check.hpp"
#include "config/config.hpp"
#include "core/run_observer.hpp"
#include "report/result.hpp"
#include "runner/executor_base.hpp"
#include "techniques/variant_plan.hpp"
#include "workload/dataset.hpp"

namespace attnbench {

struct server_sweep {
  std::vector<server_point> points;
  double max_sustainable_rate = not_a_number;
  // Every served request's outputs against the baseline's for its sample; a changed prediction is
  // judged by `study` (the variant's precision class's float64 study, rows taken per request).
  check_result check;
  // A signal stopped the sweep before these rates ran (common/interrupt.hpp); "" when all ran.
  std::string interrupted;
};

server_sweep run_server_sweep(const config& cfg, const dataset& data, const variant_config& variant,
                              const variant_plan& plan, executor_base& executor, torch::Device device,
                              const torch::Tensor& baseline_outputs,
                              const std::function<void(const std::string&, int64_t, int64_t)>& progress,
                              run_observer* observer = nullptr, const evidence_source& study = {});

}  // namespace attnbench
