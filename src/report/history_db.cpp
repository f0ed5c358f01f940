#include "report/history_db.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "common/error.hpp"
#include "common/utc_time.hpp"

namespace attnbench {
namespace {

constexpr const char* schema = R"SQL(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  run_key TEXT NOT NULL UNIQUE,
  config_name TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  git_commit TEXT NOT NULL,
  date TEXT NOT NULL,
  cpu_model TEXT NOT NULL,
  cpu_id TEXT NOT NULL,
  cpu_identity TEXT NOT NULL,
  device TEXT NOT NULL,
  device_name TEXT NOT NULL,
  threads INTEGER NOT NULL,
  torch_version TEXT NOT NULL,
  hostname TEXT NOT NULL,
  source TEXT NOT NULL,
  added_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS variants (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  rounds INTEGER NOT NULL,
  samples_per_s REAL, samples_per_s_low REAL, samples_per_s_high REAL,
  speedup REAL, speedup_low REAL, speedup_high REAL,
  p50_ms REAL, p90_ms REAL, p99_ms REAL,
  noisy INTEGER NOT NULL,
  samples_json TEXT NOT NULL,
  PRIMARY KEY (run_id, name)
);
CREATE INDEX IF NOT EXISTS runs_by_config ON runs (config_name, date);
)SQL";

// A prepared statement, finalized on scope exit.
class statement {
 public:
  statement(sqlite3* db, const std::string& sql, const std::string& path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw input_error(path, fmt::format("SQLite: {}", sqlite3_errmsg(db)));
  }
  ~statement() { sqlite3_finalize(stmt_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  statement& bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.c_str(), -1, SQLITE_TRANSIENT);
    return *this;
  }
  statement& bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  statement& bind_real(int i, double v) {  // NaN (not measured) is NULL
    if (std::isfinite(v))
      sqlite3_bind_double(stmt_, i, v);
    else
      sqlite3_bind_null(stmt_, i);
    return *this;
  }
  int step() { return sqlite3_step(stmt_); }
  std::string text(int col) const {
    const auto* t = sqlite3_column_text(stmt_, col);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL ? not_a_number : sqlite3_column_double(stmt_, col);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

std::string cpu_identity_of(const environment_info& env) {
  std::string id = env.cpu_model.empty() ? "unknown CPU" : env.cpu_model;
  if (!env.cpu_id.empty()) id += " (" + env.cpu_id + ")";
  if (env.device.rfind("cuda", 0) == 0) id += ", " + env.device_name;
  return id;
}

history_db::history_db(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw input_error("--db", fmt::format("{}: cannot open it as an SQLite database: {}", path, why));
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  try {
    exec("PRAGMA foreign_keys = ON");
    // One writer at a time from the start: two processes creating the schema at once must not race.
    exec("BEGIN IMMEDIATE");
    const auto scalar = [&](const char* sql) {
      statement q(db_, sql, path_);
      q.step();
      return q.integer(0);
    };
    const int64_t v = scalar("PRAGMA user_version");
    if (v > history_schema_version)
      throw input_error("--db", fmt::format("{} is a history of schema version {}; this attnbench reads up to {}", path,
                                            v, history_schema_version));
    if (v == 0) {
      if (scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table'") > 0)
        throw input_error("--db", fmt::format("{} is an SQLite database but not an attnbench history (it has tables "
                                              "and no attnbench schema version)",
                                              path));
      exec(schema);
      exec(fmt::format("PRAGMA user_version = {}", history_schema_version));
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

history_db::~history_db() { sqlite3_close(db_); }

void history_db::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string why = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw input_error("--db", fmt::format("{}: SQLite: {}", path_, why));
  }
}

bool history_db::add(const run_result& run, const std::string& source) {
  const environment_info& e = run.environment;
  const std::string key = fmt::format("{}|{}|{}|{}", e.config_hash, e.date, e.hostname, e.git_commit);
  exec("BEGIN IMMEDIATE");
  try {
    statement ins(db_,
                  "INSERT OR IGNORE INTO runs (run_key, config_name, config_hash, git_commit, date, cpu_model, cpu_id, "
                  "cpu_identity, device, device_name, threads, torch_version, hostname, source, added_at) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                  path_);
    ins.bind(1, key).bind(2, run.name).bind(3, e.config_hash).bind(4, e.git_commit).bind(5, e.date);
    ins.bind(6, e.cpu_model).bind(7, e.cpu_id).bind(8, cpu_identity_of(e)).bind(9, e.device).bind(10, e.device_name);
    ins.bind(11, e.threads).bind(12, e.torch_version).bind(13, e.hostname).bind(14, source).bind(15, utc_now_iso());
    if (ins.step() != SQLITE_DONE) throw input_error("--db", fmt::format("{}: SQLite: {}", path_, sqlite3_errmsg(db_)));
    if (sqlite3_changes(db_) == 0) {
      exec("COMMIT");
      return false;
    }
    const int64_t run_id = sqlite3_last_insert_rowid(db_);
    int64_t position = 0;
    for (const auto& v : run.variants) {
      statement vs(db_,
                   "INSERT INTO variants (run_id, position, name, status, rounds, samples_per_s, samples_per_s_low, "
                   "samples_per_s_high, speedup, speedup_low, speedup_high, p50_ms, p90_ms, p99_ms, noisy, "
                   "samples_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                   path_);
      nlohmann::json samples = nlohmann::json::array();
      for (double s : v.throughput.samples) samples.push_back(std::isfinite(s) ? nlohmann::json(s) : nlohmann::json());
      vs.bind(1, run_id).bind(2, position++).bind(3, v.name).bind(4, to_string(v.status)).bind(5, v.throughput.n);
      vs.bind_real(6, v.throughput.geomean).bind_real(7, v.throughput.geomean_ci_low).bind_real(8, v.throughput.geomean_ci_high);
      vs.bind_real(9, v.speedup.geomean).bind_real(10, v.speedup.geomean_ci_low).bind_real(11, v.speedup.geomean_ci_high);
      vs.bind_real(12, v.latency_ms.p50).bind_real(13, v.latency_ms.p90).bind_real(14, v.latency_ms.p99);
      vs.bind(15, static_cast<int64_t>(v.repetition.noisy)).bind(16, samples.dump());
      if (vs.step() != SQLITE_DONE)
        throw input_error("--db", fmt::format("{}: SQLite: {}", path_, sqlite3_errmsg(db_)));
    }
    exec("COMMIT");
    return true;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<history_point> history_db::points(const std::string& config_name, const std::string& variant) const {
  statement q(db_,
              "SELECT r.id, r.config_name, r.config_hash, r.git_commit, r.date, r.cpu_identity, r.device, r.threads, "
              "r.source, v.name, v.status, v.rounds, v.samples_per_s, v.samples_per_s_low, v.samples_per_s_high, "
              "v.speedup, v.speedup_low, v.speedup_high, v.p50_ms, v.p90_ms, v.p99_ms, v.noisy "
              "FROM runs r JOIN variants v ON v.run_id = r.id "
              "WHERE (?1 = '' OR r.config_name = ?1) AND (?2 = '' OR v.name = ?2) "
              "ORDER BY r.date, r.id, v.position",
              path_);
  q.bind(1, config_name).bind(2, variant);
  std::vector<history_point> out;
  int rc = 0;
  while ((rc = q.step()) == SQLITE_ROW) {
    history_point p;
    p.run_id = q.integer(0);
    p.config_name = q.text(1);
    p.config_hash = q.text(2);
    p.git_commit = q.text(3);
    p.date = q.text(4);
    p.cpu_identity = q.text(5);
    p.device = q.text(6);
    p.threads = q.integer(7);
    p.source = q.text(8);
    p.variant = q.text(9);
    p.status = q.text(10);
    p.rounds = q.integer(11);
    p.samples_per_s = q.real(12);
    p.samples_per_s_low = q.real(13);
    p.samples_per_s_high = q.real(14);
    p.speedup = q.real(15);
    p.speedup_low = q.real(16);
    p.speedup_high = q.real(17);
    p.p50_ms = q.real(18);
    p.p90_ms = q.real(19);
    p.p99_ms = q.real(20);
    p.noisy = q.integer(21) != 0;
    out.push_back(std::move(p));
  }
  if (rc != SQLITE_DONE) throw input_error("--db", fmt::format("{}: SQLite: {}", path_, sqlite3_errmsg(db_)));
  return out;
}

}  // namespace attnbench
