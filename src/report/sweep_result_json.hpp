// The results.json of a sweep: {"schema_version", "kind": "sweep", "name", "axes": [...],
// "points": [{"params": {axis: value}, "result": <a run's results.json>}]}.
#pragma once

#include <nlohmann/json.hpp>

#include "report/sweep_result.hpp"

namespace attnbench {

nlohmann::ordered_json sweep_result_to_json(const sweep_result& sweep);

// Inverse of sweep_result_to_json; throws input_error with the JSON path of a bad field.
sweep_result sweep_result_from_json(const nlohmann::ordered_json& j);

// Whether a results document is a sweep's (it has "kind": "sweep").
bool is_sweep_json(const nlohmann::ordered_json& j);

}  // namespace attnbench
