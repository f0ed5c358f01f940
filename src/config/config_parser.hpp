// JSON text → validated config. Pure validation: nothing is run, nothing is created.
//
// Both functions throw input_error carrying every problem found (not only the first), each with
// its JSON path, e.g. `variants[2].precision: expected one of fp32, amp-bf16, amp-fp16; got "fp61"`.
#pragma once

#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/config.hpp"

namespace attnbench {

// The deepest nesting of arrays and objects a config may have: the shipped ones nest 5 levels; a
// deeper document is refused before it is parsed (invalid JSON, exit 2).
inline constexpr int max_config_depth = 64;

// `source_path` is recorded in the config and anchors a relative workload.file ("" = the
// current directory). `caps` says which devices and autocast modes this machine supports.
config parse_config_text(const std::string& text, const std::string& source_path, const device_caps& caps);

// The config of each sweep point (base.sweep must be set): the point applied to base.raw, then
// parsed and validated like any config. Every problem of every point is thrown at once, each
// once, naming the first point it appeared at.
std::vector<config> sweep_point_configs(const config& base, const std::vector<sweep_point>& points,
                                       const device_caps& caps);

// Adds p, found at sweep point `point`, to `problems` unless the same problem was added at an
// earlier point: the same bad value fails many points and is said once, with the first it hit.
void add_sweep_point_problem(std::vector<problem>& problems, const problem& p, const sweep_point& point);

// Reads `path` and parses it; a missing or unreadable file is an input_error naming the path.
config load_config(const std::string& path, const device_caps& caps);

}  // namespace attnbench
