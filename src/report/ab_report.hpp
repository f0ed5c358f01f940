// The record of `attnbench ab` (cli/ab_command.hpp): two builds measured in one interleaved run,
// per variant the candidate ÷ base throughput ratio with its paired 95% interval and a verdict
// read from that interval; and its renderings (ab.json, ab.md, JUnit). Deciding lives here,
// running in cli/ab_command.cpp; like the comparison, every writer reads only this record.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/junit_writer.hpp"
#include "report/result.hpp"

namespace attnbench {

namespace ab_defaults {
// The smallest change of a variant's throughput that counts. Both builds run in one process pair,
// interleaved round by round, so drift between runs (the 15% `compare` must absorb) cancels in
// each round's ratio; what is left is the ratio interval (±2% by the adaptive target) and what
// differs between two processes of one binary (memory placement), a few percent on a shared
// machine: results/cpu-ab-acceptance/ measured 10 self-runs against it.
inline constexpr double threshold = 0.05;
}  // namespace ab_defaults

// FASTER / SLOWER: the ratio's 95% interval excludes 1 and its centre is beyond the threshold
// (above 1 + threshold, below 1 / (1 + threshold)); SAME otherwise, including a ratio without an
// interval. FAIL: either build failed the variant, or the candidate's outputs differ from the
// base's beyond the variant's tolerance. SKIPPED: not run (pending, or skipped by a build).
enum class ab_verdict { same, faster, slower, fail, skipped };
std::string to_string(ab_verdict v);  // "SAME", "FASTER", "SLOWER", "FAIL", "SKIPPED"

// The verdict of a ratio (candidate ÷ base, throughput) and its interval.
ab_verdict ratio_verdict(const speedup_summary& ratio, double threshold);

// One side (build) of a variant.
struct ab_side {
  status_kind status = status_kind::skipped;
  std::string reason;
  summary throughput;  // samples/s per round
  latency_summary latency_ms;
};

struct ab_row {
  std::string variant;
  ab_verdict verdict = ab_verdict::skipped;
  std::string reason;      // why FAIL or SKIPPED; empty otherwise
  speedup_summary ratio;   // candidate ÷ base, paired per round
  double ratio_rel_half_width = not_a_number;
  int64_t rounds = 0;
  std::string stop_reason;  // as the measurement core gave it
  bool noisy = false;       // the adaptive target was missed when the rounds stopped
  ab_side base, candidate;
  check_result check;       // the candidate's outputs against the base's
  std::vector<std::string> notes;
};

// Which build a side is.
struct ab_build {
  std::string binary;   // as given
  std::string version;  // "<harness version> <git commit>", from its greeting
};

struct ab_report {
  std::string config_path;
  std::string config_name;
  std::string config_hash;
  ab_build base, candidate;
  double threshold = ab_defaults::threshold;
  std::string repetition_mode;  // "adaptive" | "fixed"
  double target_rel_half_width = not_a_number;
  environment_info environment;  // the parent's: the machine both ran on
  std::vector<ab_row> rows;

  bool regressed() const;  // a row SLOWER or FAIL: exit 1
};

// The row of one variant from the two-variant run the measurement core made of it: variants[0] is
// the base build's, variants[1] the candidate's, whose speedup is the paired ratio.
ab_row ab_row_of(const std::string& variant, const run_result& pair, double threshold);

nlohmann::ordered_json ab_report_to_json(const ab_report& r);
std::string ab_report_markdown(const ab_report& r);
// One case per variant: classname "ab." + the config's name; SLOWER and FAIL → <failure>,
// SKIPPED → <skipped>.
junit_suite junit_suite_of(const ab_report& r);

}  // namespace attnbench
