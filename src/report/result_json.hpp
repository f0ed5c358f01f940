// The results.json schema: run_result ⇄ JSON. Key order is fixed (ordered_json) so files diff
// cleanly. NaN and ±Inf are written as null and read back as NaN; peak_memory_bytes = -1
// (not measured) is written as null and read back as -1.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "report/result.hpp"

namespace attnbench {

nlohmann::ordered_json run_result_to_json(const run_result& result);

// Inverse of run_result_to_json. Throws input_error, with the JSON path of the field, when
// schema_version differs from results_schema_version, a field is missing or has the wrong type.
run_result run_result_from_json(const nlohmann::ordered_json& j);
// Same, for documents parsed with nlohmann::json (which sorts object keys, so environment.config
// comes back with its keys sorted).
run_result run_result_from_json(const nlohmann::json& j);

// Reads a results.json file. Every failure (unreadable, invalid JSON with its line and column, a
// schema version or field problem with its JSON path) throws input_error whose message starts
// with the file's path, so a tool comparing two files says which one is wrong. A sweep's
// results.json comes back flattened (flatten_sweep): its variants named "<variant> [<point>]".
run_result load_run_result(const std::filesystem::path& path);

}  // namespace attnbench
