#include "runner/sweep_runner.hpp"

#include <fmt/format.h>

#include "common/interrupt.hpp"

namespace attnbench {

sweep_outcome run_sweep(const config& base, const std::vector<sweep_point>& points,
                        const std::vector<config>& configs, const run_options& options,
                        const std::function<void(size_t, size_t, const std::string&)>& on_point) {
  TORCH_CHECK(base.sweep && points.size() == configs.size(), "run_sweep: one config per sweep point");
  sweep_outcome outcome;
  sweep_result& res = outcome.result;
  res.name = base.name;
  for (const auto& axis : base.sweep->axes) {
    sweep_axis_result a{axis.name, {}, is_numeric_axis(axis.name)};
    for (const auto& v : axis.values) a.values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    res.axes.push_back(std::move(a));
  }
  setup_cache cache;
  run_options point_options = options;
  if (!point_options.cache) point_options.cache = &cache;
  res.points_planned = static_cast<int64_t>(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    if (const int sig = interrupt_signal()) {
      res.complete = false;
      res.incomplete_reason = fmt::format("stopped by {} before point {} of {} ({})", signal_name(sig), i + 1,
                                          points.size(), points[i].label());
      break;
    }
    if (on_point) on_point(i, points.size(), points[i].label());
    run_outcome run = run_experiment(configs[i], point_options);
    sweep_point_result p;
    for (const auto& [name, value] : points[i].params)
      p.params.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
    if (!run.result.complete) {  // stopped inside this point: it is kept, as far as it went
      res.complete = false;
      res.incomplete_reason = fmt::format("point {} of {} ({}): {}", i + 1, points.size(), points[i].label(),
                                          run.result.incomplete_reason);
    }
    p.result = std::move(run.result);
    res.points.push_back(std::move(p));
    outcome.outputs.push_back(std::move(run.outputs));
    if (!res.complete) break;
  }
  outcome.models_built = point_options.cache->models_built;
  return outcome;
}

}  // namespace attnbench
