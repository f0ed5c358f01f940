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
#include "runner/resume_state.hpp"
#include "runner/runner.hpp"

namespace attnbench {

struct sweep_outcome {
  sweep_result result;
  std::vector<std::map<std::string, torch::Tensor>> outputs;  // per point: variant → (N, C) logits
  int64_t models_built = 0;
};

// `run --resume` of a sweep (runner/resume_state.hpp): the points before `point` are kept from
// the interrupted sweep's results, `point` goes on from `state` (null: afresh), the rest run.
// When this sweep is stopped in turn, `stopped_point` and `save` say where, for the next resume.
struct sweep_resume {
  const sweep_result* prior = nullptr;
  int64_t point = 0;
  const rounds_state* state = nullptr;
  int64_t stopped_point = 0;
  loop_resume save_loop;
  rounds_state save;
};

// `configs[i]` is `points[i]` applied to `base` (sweep_point_configs). `on_point(i, n, label)` is
// called before point i runs. `resume` may be null.
sweep_outcome run_sweep(const config& base, const std::vector<sweep_point>& points,
                        const std::vector<config>& configs, const run_options& options,
                        const std::function<void(size_t, size_t, const std::string&)>& on_point = {},
                        sweep_resume* resume = nullptr);

}  // namespace attnbench
