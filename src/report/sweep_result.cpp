#include "report/sweep_result.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace attnbench {

std::string sweep_point_result::label() const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : params) parts.push_back(name + "=" + value);
  return fmt::format("{}", fmt::join(parts, " "));
}

bool sweep_result::all_passed() const {
  return std::all_of(points.begin(), points.end(),
                     [](const sweep_point_result& p) { return p.result.all_passed(); });
}

bool sweep_result::any_limit_hit() const {
  return std::any_of(points.begin(), points.end(),
                     [](const sweep_point_result& p) { return p.result.any_limit_hit(); });
}

run_result flatten_sweep(const sweep_result& sweep) {
  run_result flat;
  flat.name = sweep.name;
  if (sweep.points.empty()) return flat;
  const run_result& first = sweep.points.front().result;
  flat.environment = first.environment;
  flat.model = first.model;
  flat.workload = first.workload;
  flat.warmup = first.warmup;
  flat.repetitions = first.repetitions;
  flat.repetition_mode = first.repetition_mode;
  flat.target_rel_half_width = first.target_rel_half_width;
  flat.max_time_s = first.max_time_s;
  flat.stop_reason = first.stop_reason;
  flat.scenario = first.scenario;
  flat.latency_bound_ms = first.latency_bound_ms;
  flat.baseline = first.baseline;
  for (const auto& p : sweep.points) {
    for (auto v : p.result.variants) {
      v.name = fmt::format("{} [{}]", v.name, p.label());
      flat.variants.push_back(std::move(v));
    }
  }
  return flat;
}

}  // namespace attnbench
