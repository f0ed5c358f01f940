// Where `attnbench profile` (and `run --profile`) writes, under one directory:
//
//   profile.md                      schedule, the attention breakdown, every operator table
//   breakdown.md, breakdown.csv     the attention breakdown, variants side by side
//   <variant>/trace.json            Chrome trace of the last cycle (Perfetto, chrome://tracing)
//   <variant>/operators.md, .csv    the operator table, top N by self time
//   tensorboard/<variant>/<worker>.<timestamp>.pt.trace.json
//                                   one trace per cycle, in the layout the PyTorch Profiler
//                                   TensorBoard plugin reads: `tensorboard --logdir DIR/tensorboard`
//                                   shows one run per variant, one span per cycle
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace attnbench {

// A variant's name reduced to characters safe in a file name.
std::string safe_file_name(const std::string& name);

std::filesystem::path variant_profile_dir(const std::filesystem::path& dir, const std::string& variant);
std::filesystem::path tensorboard_run_dir(const std::filesystem::path& dir, const std::string& variant);
// <worker>.<timestamp_ms>.pt.trace.json, as torch.profiler.tensorboard_trace_handler names it;
// the worker is "<host>_<pid>".
std::string tensorboard_trace_name(const std::string& worker, int64_t timestamp_ms);

// The files with fixed names (not the timestamped TensorBoard traces).
std::vector<std::filesystem::path> profile_output_files(const std::filesystem::path& dir,
                                                        const std::vector<std::string>& variants);

// Everything that would stop the outputs from being written, as output_problems reports it, plus
// earlier TensorBoard traces in a run directory (they would show as extra spans) unless `force`.
std::vector<problem> profile_output_problems(const std::filesystem::path& dir,
                                             const std::vector<std::string>& variants, bool force,
                                             const std::string& where, const std::string& option);

}  // namespace attnbench
