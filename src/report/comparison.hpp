// The comparison of two runs (`attnbench compare BASE NEW`): variants matched by name, a
// throughput verdict per pair from a significance test and a size threshold, and the drift of
// the output check. Like run_result for the run writers, this record is all the compare writers
// (markdown, JSON, JUnit) read; deciding lives here, rendering there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/result.hpp"

namespace attnbench {

namespace compare_defaults {
// CPU timings of two separate runs (another process, another moment on a shared machine) drift
// even when the code is the same, and the U test sees only the spread within each run: the size
// threshold is what absorbs that drift. Measured on configs/ci.json on the 2-core CI machine
// kind, 11 runs within half an hour: medians on a quiet machine spread ±5.5% (pairs up to 14%
// apart, significant at 10 repetitions), 10–25% lower during a concurrent compile. 15% stays above
// the quiet drift and below the effects attnbench measures (1.3× to 12×). On a GPU or a
// dedicated machine, a lower --threshold is reasonable.
inline constexpr double threshold = 0.15;
inline constexpr double alpha = 0.05;  // the usual significance level; compare.py's default too
}  // namespace compare_defaults

// What the throughput samples are divided by before they are compared.
enum class normalization {
  none,     // samples/s as measured
  ceiling,  // samples/s per GFLOP/s of the same run's measured matmul ceiling of the variant's dtype:
            // a faster or slower runner moves both, a slower code path moves only the first
};
std::string to_string(normalization n);  // "none", "ceiling"

struct compare_options {
  double threshold = compare_defaults::threshold;  // |change of the geometric means| that matters, 0.05 = 5%
  double alpha = compare_defaults::alpha;          // significance level of the two-sided U test
  normalization normalize = normalization::none;
};

// SAME: no significant change, or one within the threshold. FASTER / SLOWER: p < alpha and the
// geometric means differ by more than the threshold. NOISY: too few repetitions for any outcome to
// reach alpha (see min_two_sided_p), so the test cannot decide.
enum class verdict { same, faster, slower, noisy };
std::string to_string(verdict v);  // "SAME", "FASTER", "SLOWER", "NOISY"

// How a variant name appears in the two files.
enum class pairing {
  compared,  // in both, and both ran
  skipped,   // in both, SKIPPED in at least one: no throughput to compare
  added,     // only in NEW
  removed,   // only in BASE
};
std::string to_string(pairing p);  // "compared", "skipped", "added", "removed"

// One side of a variant pair; `present` is false for the missing side of added/removed.
struct compared_side {
  bool present = false;
  status_kind status = status_kind::skipped;        // the variant's status
  status_kind check_status = status_kind::skipped;  // its output check
  double rel_l2 = not_a_number;
  int64_t n = 0;                 // finite throughput samples
  // samples/s: the geometric mean of those samples and its 95% t interval (stats/summary.hpp)
  double geomean = not_a_number;
  double geomean_ci_low = not_a_number;
  double geomean_ci_high = not_a_number;
  bool noisy = false;  // its run's adaptive repetitions missed their target for it
  // --normalize ceiling: the ceiling (GFLOP/s) the samples were divided by and its dtype; NaN
  // when its run measured none for that dtype (the pair then gets no verdict)
  double ceiling_gflops = not_a_number;
  std::string compute_dtype;
};

struct variant_comparison {
  std::string name;
  pairing kind = pairing::compared;
  compared_side base, candidate;
  // Throughput (kind == compared only; NaN otherwise).
  double change = not_a_number;  // geomean(new) / geomean(base) − 1; −0.2 = 20% slower
  // 95% interval of `change`: Welch's t on the logs, as the two runs are independent samples
  double change_ci_low = not_a_number;
  double change_ci_high = not_a_number;
  double u = not_a_number;        // Mann-Whitney U of NEW's samples against BASE's
  double p_value = not_a_number;  // two-sided
  std::string method;             // "exact" | "asymptotic" | "" when not tested
  double min_p = not_a_number;    // smallest p these sample sizes can give
  bool has_verdict = false;       // kind == compared
  verdict outcome = verdict::same;
  // Correctness: NEW fails (status or check FAIL) where BASE did not fail, or was absent.
  bool newly_failing = false;
  bool fixed = false;  // BASE failed, NEW passes
  std::string note;    // why NOISY, why skipped, …; empty when nothing to say
  bool regression() const { return (has_verdict && outcome == verdict::slower) || newly_failing; }
};

// Which run a side is, for the reader of the report.
struct run_identity {
  std::string path;  // as given on the command line
  std::string name;
  std::string git_commit;
  std::string date;
  std::string device_name;
};

struct comparison {
  run_identity base, candidate;
  compare_options options;
  // Differences that make the runs incomparable in principle (other weights, workload, config,
  // machine or LibTorch), one line each; `compare` prints them, or exits 2 with --strict.
  std::vector<std::string> warnings;
  // NEW's variants in its order, then those only in BASE in BASE's order.
  std::vector<variant_comparison> variants;

  int64_t count(verdict v) const;  // among compared variants
  int64_t count(pairing p) const;
  int64_t newly_failing() const;
  int64_t regressions() const;  // variants with regression()
  bool regressed() const { return regressions() > 0; }
};

// Matches variants by name and judges each pair. The throughput test is mann_whitney_u on the
// per-repetition samples/s (throughput.samples, non-finite values dropped). Paths only label
// the sides. Never throws on content: whatever run_result_from_json accepted can be compared.
comparison compare_runs(const run_result& base, const run_result& candidate, const compare_options& options,
                        const std::string& base_path = "", const std::string& candidate_path = "");

// The smallest number of repetitions per side (equal sides) at which a change can be significant
// at `alpha`: 4 for alpha = 0.05. For the NOISY note.
int64_t repetitions_needed(double alpha);

}  // namespace attnbench
