// The results history (`attnbench history`): runs recorded in an SQLite database, one row per run
// (config hash, commit, date, CPU identity) and one per variant (throughput and speedup with their
// intervals, latency, rounds, the per-round samples). SQLite does the storage, the locking and
// the journal: two CI jobs adding at once take turns (every write is one IMMEDIATE transaction,
// waiting up to busy_timeout_ms for the other), and a crash mid-write leaves the last committed
// state. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/result.hpp"

struct sqlite3;

namespace attnbench {

inline constexpr int history_schema_version = 1;

// One variant of one recorded run, as `history show/check/html` read it.
struct history_point {
  int64_t run_id = 0;
  std::string config_name;
  std::string config_hash;
  std::string git_commit;
  std::string date;          // the run's, ISO 8601 UTC
  std::string cpu_identity;  // what makes a series: see cpu_identity_of
  std::string device;
  int64_t threads = 0;
  std::string source;        // the folder it was added from
  std::string variant;
  std::string status;        // "PASS", "FAIL", …
  int64_t rounds = 0;
  double samples_per_s = not_a_number, samples_per_s_low = not_a_number, samples_per_s_high = not_a_number;
  double speedup = not_a_number, speedup_low = not_a_number, speedup_high = not_a_number;
  double p50_ms = not_a_number, p90_ms = not_a_number, p99_ms = not_a_number;
  bool noisy = false;
};

// The machine a run's figures belong to: CPU model and identity (vendor, family, model, stepping:
// two CPUs sold under one name are told apart), and the GPU for a CUDA run. A run whose file
// predates cpu_id is identified by its model name alone.
std::string cpu_identity_of(const environment_info& env);

class history_db {
 public:
  // Opens (creating when missing) the database at `path`; input_error naming it when it cannot,
  // or when it is not an attnbench history (another schema, a newer version).
  explicit history_db(const std::string& path);
  ~history_db();
  history_db(const history_db&) = delete;
  history_db& operator=(const history_db&) = delete;

  // Records one run; false when the same run (config hash, date, host, commit) is already there.
  bool add(const run_result& run, const std::string& source);

  // Every recorded point, oldest first (by run date, then variant order); empty filters match all.
  std::vector<history_point> points(const std::string& config_name = "", const std::string& variant = "") const;

  static constexpr int busy_timeout_ms = 60000;  // a concurrent writer's transaction is milliseconds

 private:
  void exec(const std::string& sql) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace attnbench
