// `attnbench serve` (cli/serve_command.hpp), the child side of `attnbench ab`: the experiment set up
// as `run` sets it up (model, workload, "amp" resolved, the offline scenario), then handed to a
// callback that drives single passes instead of the measurement loop.
#pragma once

#include <functional>

#include "config/config.hpp"
#include "report/result.hpp"
#include "runner/runner.hpp"

namespace attnbench {

class offline_scenario;

// Called once everything is built: the config as resolved, the scenario over its variants, and
// the run record with its model, workload and environment filled in.
using serve_callback = std::function<void(const config&, offline_scenario&, run_result&)>;

// Builds the experiment like run_experiment and calls `serve` instead of measuring. A train
// scenario or a multi-process world is not served (the caller refuses those configs).
void serve_experiment(const config& cfg, const run_options& options, const serve_callback& serve);

// The run's environment block: harness, LibTorch, device, CPU identity, threads, host, date,
// config hash, and (unless options.measure_ceilings is false) the matmul ceilings.
// Ceilings: fp32's and the dtype "amp" considered; add_ceilings adds the variants' own once planned.
environment_info describe_environment(const config& cfg, torch::Device device, const run_options& options);

// Measures the matmul ceiling of each of `dtypes` ("fp32", "bf16", "fp16"; others have none) that
// env lacks, unless options.measure_ceilings is false.
void add_ceilings(environment_info& env, const config& cfg, torch::Device device, const run_options& options,
                  const std::vector<std::string>& dtypes);

}  // namespace attnbench
