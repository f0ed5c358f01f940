// Runs chosen variants of an experiment under the Kineto profiler, following the config's
// `profile` schedule, and writes every profile output (profile_outputs.hpp) into one directory.
//
// Each variant runs on the run's model and workload exactly as `run` does (same weights, batches,
// precision, attention); a step is one forward pass over one batch, the variant's batches taken
// round-robin. A decoder (a gpt2 or llama model) is profiled as the generate scenario runs it: its
// variant's first batch of prompts is prefilled (not recorded), then a step is one greedy decode
// step of that batch against its KV cache, the context growing by one each step; the decoder
// records no labelled regions, so its profile is the operator table of its decode steps. The callers check the variant names and the output directory first.
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
  std::string skipped;                        // a decoder variant the generate scenario skips: why
  std::string steps;                          // a decoder's: what its recorded steps were
  double step_ms = 0;                         // a decoder's: mean wall time of a recorded step
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

// What `profile` prints: the breakdown tables for an encoder; for a decoder, a line per variant
// (recorded steps, ms per recorded step, the operator with the most self time and its share).
std::string profile_summary_markdown(const config& cfg, const profile_outcome& outcome);

// The summary report: schedule, breakdown, operator tables.
std::string profile_markdown(const config& cfg, const profile_outcome& outcome);

}  // namespace attnbench
