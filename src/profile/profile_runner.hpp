// Runs chosen variants of an experiment under the Kineto profiler, following the config's
// `profile` schedule, and writes every profile output (profile_outputs.hpp) into one directory.
//
// Each variant runs on the run's model and workload exactly as `run` does (same weights, batches,
// precision, attention); a step is one forward pass over one batch, the variant's batches taken
// round-robin. The callers check the variant names and the output directory first.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "profile/operator_table.hpp"
#include "profile/region_breakdown.hpp"

namespace attnbench {

struct profiled_variant {
  std::string name;
  int64_t recorded_steps = 0;  // steps inside active windows, all cycles together
  int64_t cycles = 0;
  operator_table operators;
  region_breakdown breakdown;                 // over every recorded step
  std::vector<region_breakdown> by_length;    // one per padded length, when the steps' lengths differ
  std::vector<std::filesystem::path> traces;  // the TensorBoard traces, one per cycle
};

struct profile_outcome {
  std::string device;
  std::vector<profiled_variant> variants;
};

// Names of the variants `profile` runs when none are asked for: every one that is not pending.
std::vector<std::string> default_profile_variants(const config& cfg);

// Throws input_error (path `where`) for a name that is no variant, or a pending one.
void check_profile_variants(const config& cfg, const std::vector<std::string>& names,
                            const std::string& where);

// `force`: replace the traces of an earlier profile in the TensorBoard run directories.
profile_outcome profile_experiment(const config& cfg, const std::vector<std::string>& variants,
                                   const std::filesystem::path& dir, bool force,
                                   const std::function<void(const std::string&)>& log);

// The breakdown tables (breakdown.md): variants side by side, then by sequence length when the
// recorded steps had different lengths.
std::string breakdown_markdown(const profile_outcome& outcome);

// The summary report: schedule, breakdown, operator tables.
std::string profile_markdown(const config& cfg, const profile_outcome& outcome);

}  // namespace attnbench
