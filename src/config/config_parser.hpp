// JSON text → validated config. Pure validation: nothing is run, nothing is created.
//
// Both functions throw input_error carrying every problem found (not only the first), each with
// its JSON path, e.g. `variants[2].precision: expected one of fp32, amp-bf16, amp-fp16; got "fp61"`.
#pragma once

#include <string>

#include "config/config.hpp"

namespace attnbench {

// `source_path` is recorded in the config and anchors a relative workload.file ("" = the
// current directory). `caps` says which devices and autocast modes this machine supports.
config parse_config_text(const std::string& text, const std::string& source_path, const device_caps& caps);

// Reads `path` and parses it; a missing or unreadable file is an input_error naming the path.
config load_config(const std::string& path, const device_caps& caps);

}  // namespace attnbench
