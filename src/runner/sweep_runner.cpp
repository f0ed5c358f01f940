#include "runner/sweep_runner.hpp"

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
  for (size_t i = 0; i < points.size(); ++i) {
    if (on_point) on_point(i, points.size(), points[i].label());
    run_outcome run = run_experiment(configs[i], point_options);
    sweep_point_result p;
    for (const auto& [name, value] : points[i].params)
      p.params.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
    p.result = std::move(run.result);
    res.points.push_back(std::move(p));
    outcome.outputs.push_back(std::move(run.outputs));
  }
  outcome.models_built = point_options.cache->models_built;
  return outcome;
}

}  // namespace attnbench
