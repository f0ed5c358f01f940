// Runs a sweep: the experiment once per point of the grid, in the grid's order (config/sweep.hpp
// puts the axes that rebuild the model outermost), sharing the model and the matmul ceilings
// between consecutive points through a setup_cache.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "report/sweep_result.hpp"
#include "runner/runner.hpp"

namespace attnbench {

struct sweep_outcome {
  sweep_result result;
  std::vector<std::map<std::string, torch::Tensor>> outputs;  // per point: variant → (N, C) logits
  int64_t models_built = 0;
};

// `configs[i]` is `points[i]` applied to `base` (sweep_point_configs). `on_point(i, n, label)` is
// called before point i runs.
sweep_outcome run_sweep(const config& base, const std::vector<sweep_point>& points,
                        const std::vector<config>& configs, const run_options& options,
                        const std::function<void(size_t, size_t, const std::string&)>& on_point = {});

}  // namespace attnbench
