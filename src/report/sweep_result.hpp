// The result record of a sweep: one run_result per point of the grid, with the point's values.
// The sweep writers (sweep_writers.hpp) read only this, as the run writers read only run_result.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/result.hpp"

namespace attnbench {

struct sweep_axis_result {
  std::string name;
  std::vector<std::string> values;  // as text, in the config's order ("8", "bert-mini")
  bool numeric = false;
};

struct sweep_point_result {
  std::vector<std::pair<std::string, std::string>> params;  // axis → value, in the axes' order
  run_result result;
  std::string label() const;  // "batch_size=8 max_length=128"
};

struct sweep_result {
  int schema_version = results_schema_version;
  std::string name;
  std::vector<sweep_axis_result> axes;
  std::string chart = "throughput";  // what sweep.svg plots: the config's sweep.chart
  std::vector<sweep_point_result> points;  // in the order they ran
  int64_t points_planned = 0;              // in the grid: more than points.size() when stopped early
  bool complete = true;                    // as run_result::complete
  std::string incomplete_reason;
  bool all_passed() const;
  bool any_limit_hit() const;
};

// A sweep as one run_result, for `compare`: every point's variants, each named
// "<variant> [<point label>]", so variants pair up by name and point. Environment, model and
// workload are the first point's.
run_result flatten_sweep(const sweep_result& sweep);

}  // namespace attnbench
