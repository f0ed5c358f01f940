#include "runner/sweep_runner.hpp"

#include <fmt/format.h>

#include "common/interrupt.hpp"

namespace attnbench {

sweep_outcome run_sweep(const config& base, const std::vector<sweep_point>& points,
                        const std::vector<config>& configs, const run_options& options,
                        const std::function<void(size_t, size_t, const std::string&)>& on_point,
                        sweep_resume* resume) {
  TORCH_CHECK(base.sweep && points.size() == configs.size(), "run_sweep: one config per sweep point");
  sweep_outcome outcome;
  sweep_result& res = outcome.result;
  res.name = base.name;
  // The chart's quantity, validated by read_sweep (config/sweep.hpp) and kept in the document.
  if (const auto block = base.raw.find("sweep"); block != base.raw.end() && block->is_object())
    res.chart = block->value("chart", res.chart);
  for (const auto& axis : base.sweep->axes) {
    sweep_axis_result a{axis.name, {}, is_numeric_axis(axis.name)};
    for (const auto& v : axis.values) a.values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    res.axes.push_back(std::move(a));
  }
  setup_cache cache;
  run_options point_options = options;
  if (!point_options.cache) point_options.cache = &cache;
  res.points_planned = static_cast<int64_t>(points.size());
  size_t first = 0;
  if (resume) {  // the finished points of the interrupted sweep stand as they were
    first = static_cast<size_t>(resume->point);
    for (size_t i = 0; i < first; ++i) {
      res.points.push_back(resume->prior->points[i]);
      outcome.outputs.emplace_back();  // written by the interrupted run
    }
    resume->save_loop.save = &resume->save;
  }
  for (size_t i = first; i < points.size(); ++i) {
    if (resume) {
      resume->stopped_point = static_cast<int64_t>(i);
      resume->save_loop.saved = false;
      const bool resumed_here = i == first;  // the point the resume file's state belongs to
      resume->save_loop.from = resumed_here ? resume->state : nullptr;
      resume->save_loop.prior =
          resumed_here && i < resume->prior->points.size() ? &resume->prior->points[i].result : nullptr;
      point_options.resume = &resume->save_loop;
    }
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
