// Sizes in bytes as configs write them, and the config's "device_memory_limit" (issue 16).
//
// The limit is read from the config's document (config::raw), which the parser has validated,
// rather than held in a field of `config`: one more field there would rebuild every translation
// unit of the project, and nothing else reads it.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace attnbench {

// A non-negative integer, or a string of a positive number and a unit: "1.5GiB", "512MiB",
// "4096KiB". nullopt for anything else.
std::optional<int64_t> parse_byte_size(const nlohmann::ordered_json& v);

// The bytes the CUDA caching allocator may hold on the run's device (its per-process memory
// fraction), to run a model that does not fit; 0 when the config sets no limit. No effect on a
// CPU run.
int64_t device_memory_limit(const config& cfg);

// measure.max_memory_bytes: the CPU memory one step of a variant (set-up, check pass, one pass)
// may allocate on top of what was allocated when it started (runner/memory_cap.hpp); 0: no cap.
int64_t max_memory_bytes(const config& cfg);

// check.study_max_memory: the memory the float64 study of a decoder's changed tokens may take
// (runner/generation_study.hpp); -1 when the config does not set it (the host's available memory).
int64_t study_max_memory(const config& cfg);

// measure.max_time_s as the config gives it (0 when absent: the adaptive default budget does not
// make a slow variant TIMEOUT; only a limit the user set does).
double explicit_max_time_s(const config& cfg);

}  // namespace attnbench
