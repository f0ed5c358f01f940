// What `attnbench run CONFIG --resume DIR` continues from (README "What happens when things go
// wrong"): an interrupted run leaves resume.json beside its reports, with the timed passes of the
// rounds it completed. The resumed run keeps them, runs each variant's check pass and warm-up again
// (a new process starts cold), and times only the rounds still missing, so its reports have the
// form of an uninterrupted run's: every round is still one pass of every variant, in the same
// alternating order, and every speedup is paired within its round. A variant that left the run by
// an error (FAIL, OOM, TIMEOUT) keeps its row from results.json and is not run again; in a sweep,
// every finished point is kept from results.json and only the points after it run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/result.hpp"

namespace attnbench {

// One variant's part of the completed rounds.
struct variant_rounds {
  std::string name;
  std::vector<double> pass_s;   // one timed pass per completed round it took part in
  std::vector<double> unit_ms;  // every unit (batch, step) of those passes, for the latencies
  bool left_by_error = false;   // FAIL, OOM or TIMEOUT before the end: its row is kept, not run again
};

// The measurement loop's progress when a signal stopped it.
struct rounds_state {
  int64_t rounds = 0;    // complete timed rounds
  double timed_s = 0;    // seconds they took (an adaptive run's time budget counts them)
  std::vector<variant_rounds> variants;
  const variant_rounds* find(const std::string& name) const;
};

// The measurement loop's side of a resumed run (runner/measurement_loop.hpp).
struct loop_resume {
  const rounds_state* from = nullptr;   // continue these rounds (null: start afresh)
  const run_result* prior = nullptr;    // the interrupted run's rows, for its final variants
  rounds_state* save = nullptr;         // filled when this run is interrupted in turn
  bool saved = false;                   // set when `save` was filled
};

// resume.json: the state and what it belongs to.
struct resume_file {
  std::string config_hash;  // config_hash_of the config that ran
  std::string cpu_id;       // the CPU it ran on: rounds timed on another machine do not mix
  std::string kind = "run"; // "run" | "sweep"
  int64_t point = 0;        // sweep: the point the state belongs to (finished points come before it)
  bool has_state = false;   // false: stopped between points (or in set-up): nothing timed to keep
  rounds_state state;
};

inline constexpr const char* resume_file_name = "resume.json";
inline constexpr int resume_format_version = 1;

// The hash every results.json records (environment.config_hash): the config as given, key order
// ignored.
std::string config_hash_of(const nlohmann::ordered_json& raw_config);

nlohmann::ordered_json resume_to_json(const resume_file& r);
// Throws input_error naming `file` and the field when the document is not a resume file.
resume_file resume_from_json(const nlohmann::ordered_json& j, const std::string& file);
resume_file read_resume_file(const std::filesystem::path& path);

}  // namespace attnbench
