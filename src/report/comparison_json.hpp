// compare.json: the comparison record as JSON, keys in a fixed order (README "compare.json").
// NaN is null, as in results.json.
#pragma once

#include <nlohmann/json.hpp>

#include "report/comparison.hpp"

namespace attnbench {

// 2: each side's "geomean" with its interval replaces "median"; "geomean_change" with its interval
// replaces "change" (a change of medians).
// 3: "normalize" ("none" | "ceiling"), and each side's compute_dtype and ceiling_gflops; with
// "ceiling", geomean and its interval are samples/s per GFLOP/s of that side's ceiling.
inline constexpr int comparison_schema_version = 3;

nlohmann::ordered_json comparison_to_json(const comparison& c);

}  // namespace attnbench
