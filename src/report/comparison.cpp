#include "report/comparison.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/ceilings.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/summary.hpp"

namespace attnbench {
namespace {

// Repetitions beyond which repetitions_needed stops looking: min_two_sided_p(n, n) is below
// 1e-10 by n = 20, far under any alpha anyone uses.
constexpr int64_t max_repetitions_searched = 1000;

bool fails(const variant_result& v) {
  return v.status == status_kind::fail || v.check.status == status_kind::fail;
}

std::vector<double> finite_samples(const summary& s) {
  std::vector<double> out;
  for (double v : s.samples)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

// The samples a verdict is drawn from: samples/s, or per GFLOP/s of the run's ceiling of the
// variant's dtype (--normalize ceiling; none when the run measured no such ceiling).
std::vector<double> compared_samples(const variant_result& v, const run_result& run, const compare_options& o) {
  std::vector<double> samples = finite_samples(v.throughput);
  if (o.normalize == normalization::none) return samples;
  const std::string dtype = v.compute_dtype.empty() ? compute_dtype_of_label(v.precision) : v.compute_dtype;
  const double c = measured_ceiling(run.environment, dtype);
  if (!std::isfinite(c)) return {};
  for (double& x : samples) x /= c;
  return samples;
}

compared_side side_of(const variant_result& v, const run_result& run, const compare_options& o) {
  compared_side s;
  s.present = true;
  s.status = v.status;
  s.check_status = v.check.status;
  s.rel_l2 = v.check.rel_l2;
  s.compute_dtype = v.compute_dtype.empty() ? compute_dtype_of_label(v.precision) : v.compute_dtype;
  if (o.normalize == normalization::ceiling) s.ceiling_gflops = measured_ceiling(run.environment, s.compute_dtype);
  const std::vector<double> samples = compared_samples(v, run, o);
  s.n = static_cast<int64_t>(samples.size());
  const geomean_interval g = geomean_ci(samples);
  s.geomean = g.centre;
  s.geomean_ci_low = g.low;
  s.geomean_ci_high = g.high;
  s.noisy = v.repetition.noisy;
  return s;
}

const variant_result* find(const run_result& r, const std::string& name) {
  for (const auto& v : r.variants)
    if (v.name == name) return &v;
  return nullptr;
}

std::string percent(double fraction) { return fmt::format("{:g}%", fraction * 100); }

void judge_throughput(variant_comparison& c, const variant_result& base, const run_result& base_run,
                      const variant_result& candidate, const run_result& candidate_run, const compare_options& o) {
  c.has_verdict = true;
  const std::vector<double> b = compared_samples(base, base_run, o), n = compared_samples(candidate, candidate_run, o);
  if (o.normalize == normalization::ceiling && (!std::isfinite(c.base.ceiling_gflops) || !std::isfinite(c.candidate.ceiling_gflops))) {
    c.outcome = verdict::noisy;
    const bool in_base = !std::isfinite(c.base.ceiling_gflops), in_new = !std::isfinite(c.candidate.ceiling_gflops);
    c.note = fmt::format("cannot normalise: {} measured no {} matmul ceiling",
                         in_base && in_new ? "BASE and NEW" : in_base ? "BASE" : "NEW",
                         in_base ? c.base.compute_dtype : c.candidate.compute_dtype);
    return;
  }
  // The change and its interval are of the geometric means, the statistic each side reports.
  const speedup_summary ratio = geomean_ratio_unpaired(n, b);
  c.change = ratio.geomean - 1;
  c.change_ci_low = ratio.geomean_ci_low - 1;
  c.change_ci_high = ratio.geomean_ci_high - 1;
  c.min_p = min_two_sided_p(static_cast<int64_t>(b.size()), static_cast<int64_t>(n.size()));
  if (b.empty() || n.empty()) {
    c.outcome = verdict::noisy;
    c.note = fmt::format("no throughput samples in {}", b.empty() ? "BASE" : "NEW");
    return;
  }
  const mann_whitney_result t = mann_whitney_u(n, b);
  c.u = t.u;
  c.p_value = t.p_value;
  c.method = to_string(t.method);
  if (!(c.min_p < o.alpha)) {
    c.outcome = verdict::noisy;
    c.note = fmt::format(
        "{} vs {} repetitions: the smallest attainable p is {:.3g}, not below alpha {:g}; "
        "run at least {} repetitions per side",
        b.size(), n.size(), c.min_p, o.alpha, repetitions_needed(o.alpha));
    return;
  }
  const bool significant = c.p_value < o.alpha;
  if (significant && c.change < -o.threshold)
    c.outcome = verdict::slower;
  else if (significant && c.change > o.threshold)
    c.outcome = verdict::faster;
  else
    c.outcome = verdict::same;
  if (significant && c.outcome == verdict::same)
    c.note =
        fmt::format("significant (p = {:.3g}) but within the {} threshold", c.p_value, percent(o.threshold));
  // A verdict from data its own run flagged as noisy says so: the run could not make the
  // interval as narrow as it was asked to.
  if (c.base.noisy || c.candidate.noisy) {
    const std::string which = c.base.noisy && c.candidate.noisy ? "BASE and NEW"
                              : c.base.noisy                    ? "BASE"
                                                                : "NEW";
    c.note = (c.note.empty() ? "" : c.note + "; ") +
             fmt::format("{} flagged noisy (adaptive repetitions missed their target): {}", which,
                         significant ? "the significance rests on noisier data than the run asked for"
                                     : "a real change may be hidden in the noise");
  }
}

// One warning per field that differs; `what` names the field as in results.json.
template <typename T>
void differs(std::vector<std::string>& warnings, const std::string& what, const T& base, const T& candidate) {
  if (base == candidate) return;
  warnings.push_back(fmt::format("{} differs: BASE {}, NEW {}", what, base, candidate));
}

void differs(std::vector<std::string>& warnings, const std::string& what, const std::string& base,
             const std::string& candidate) {
  if (base == candidate) return;
  warnings.push_back(fmt::format("{} differs: BASE \"{}\", NEW \"{}\"", what, base, candidate));
}

void differs(std::vector<std::string>& warnings, const std::string& what, double base, double candidate) {
  if (base == candidate || (std::isnan(base) && std::isnan(candidate))) return;
  warnings.push_back(fmt::format("{} differs: BASE {}, NEW {}", what, base, candidate));
}

std::vector<std::string> environment_warnings(const run_result& b, const run_result& n) {
  std::vector<std::string> w;
  differs(w, "model.weight_checksum", b.model.weight_checksum, n.model.weight_checksum);
  differs(w, "workload.samples", b.workload.samples, n.workload.samples);
  differs(w, "workload.max_length", b.workload.max_length, n.workload.max_length);
  differs(w, "workload.lengths", b.workload.lengths, n.workload.lengths);
  differs(w, "workload.real_tokens", b.workload.real_tokens, n.workload.real_tokens);
  differs(w, "workload.min_length", b.workload.min_length, n.workload.min_length);
  differs(w, "workload.max_length_seen", b.workload.max_length_seen, n.workload.max_length_seen);
  differs(w, "workload.mean_length", b.workload.mean_length, n.workload.mean_length);
  // Files from before the tokenizer was recorded have it empty: nothing to compare.
  if (!b.workload.tokenizer_fnv1a64.empty() && !n.workload.tokenizer_fnv1a64.empty())
    differs(w, "workload.tokenizer_fnv1a64", b.workload.tokenizer_fnv1a64, n.workload.tokenizer_fnv1a64);
  differs(w, "scenario", b.scenario, n.scenario);
  differs(w, "environment.config_hash", b.environment.config_hash, n.environment.config_hash);
  differs(w, "environment.device_name", b.environment.device_name, n.environment.device_name);
  // One cloud label, two CPUs: "AMD EPYC" names a Zen 3 and a Zen 4 alike. Files from before
  // these fields have them empty: nothing to compare.
  if (!b.environment.cpu_id.empty() && !n.environment.cpu_id.empty()) {
    differs(w, "environment.cpu_id", b.environment.cpu_id, n.environment.cpu_id);
    differs(w, "environment.cpu_features", fmt::format("{}", fmt::join(b.environment.cpu_features, " ")),
            fmt::format("{}", fmt::join(n.environment.cpu_features, " ")));
  } else if (b.environment.cpu_id.empty() != n.environment.cpu_id.empty()) {
    // One side from before: whether the CPUs differ is unknown, and that must be said (a CI
    // baseline made on a Zen 4 read against a Zen 3 run looked like a regression, silently).
    const bool base_old = b.environment.cpu_id.empty();
    w.push_back(fmt::format("environment.cpu_id: {} does not record it (written before it was), {} is \"{}\": "
                            "whether the two ran on the same CPU is unknown; remake {} on this machine kind",
                            base_old ? "BASE" : "NEW", base_old ? "NEW" : "BASE",
                            base_old ? n.environment.cpu_id : b.environment.cpu_id, base_old ? "BASE" : "NEW"));
  }
  // Added later than cpu_id: compared only when both files have them.
  if (b.environment.cpu_count > 0 && n.environment.cpu_count > 0)
    differs(w, "environment.cpu_count", b.environment.cpu_count, n.environment.cpu_count);
  if (!b.environment.cpu_caches.empty() && !n.environment.cpu_caches.empty())
    differs(w, "environment.cpu_caches", b.environment.cpu_caches, n.environment.cpu_caches);
  differs(w, "environment.gpu_capability", b.environment.gpu_capability, n.environment.gpu_capability);
  differs(w, "environment.gpu_driver", b.environment.gpu_driver, n.environment.gpu_driver);
  differs(w, "environment.threads", b.environment.threads, n.environment.threads);
  differs(w, "environment.torch_version", b.environment.torch_version, n.environment.torch_version);
  return w;
}

run_identity identity_of(const run_result& r, const std::string& path) {
  return {path, r.name, r.environment.git_commit, r.environment.date, r.environment.device_name};
}

}  // namespace

std::string to_string(verdict v) {
  switch (v) {
    case verdict::same:
      return "SAME";
    case verdict::faster:
      return "FASTER";
    case verdict::slower:
      return "SLOWER";
    case verdict::noisy:
      return "NOISY";
  }
  return "UNKNOWN";  // unreachable for valid enum values; keeps -Wreturn-type quiet
}

std::string to_string(normalization n) { return n == normalization::ceiling ? "ceiling" : "none"; }

std::string to_string(pairing p) {
  switch (p) {
    case pairing::compared:
      return "compared";
    case pairing::skipped:
      return "skipped";
    case pairing::added:
      return "added";
    case pairing::removed:
      return "removed";
  }
  return "unknown";  // unreachable for valid enum values
}

int64_t comparison::count(verdict v) const {
  return std::count_if(variants.begin(), variants.end(),
                       [&](const variant_comparison& c) { return c.has_verdict && c.outcome == v; });
}

int64_t comparison::count(pairing p) const {
  return std::count_if(variants.begin(), variants.end(),
                       [&](const variant_comparison& c) { return c.kind == p; });
}

int64_t comparison::newly_failing() const {
  return std::count_if(variants.begin(), variants.end(),
                       [](const variant_comparison& c) { return c.newly_failing; });
}

int64_t comparison::regressions() const {
  return std::count_if(variants.begin(), variants.end(),
                       [](const variant_comparison& c) { return c.regression(); });
}

int64_t repetitions_needed(double alpha) {
  for (int64_t n = 1; n <= max_repetitions_searched; ++n)
    if (min_two_sided_p(n, n) < alpha) return n;
  return max_repetitions_searched;
}

comparison compare_runs(const run_result& base, const run_result& candidate, const compare_options& options,
                        const std::string& base_path, const std::string& candidate_path) {
  comparison out;
  out.base = identity_of(base, base_path);
  out.candidate = identity_of(candidate, candidate_path);
  out.options = options;
  out.warnings = environment_warnings(base, candidate);

  for (const auto& nv : candidate.variants) {
    variant_comparison c;
    c.name = nv.name;
    c.candidate = side_of(nv, candidate, options);
    const variant_result* bv = find(base, nv.name);
    if (bv == nullptr) {
      c.kind = pairing::added;
      c.newly_failing = fails(nv);
      c.note = "only in NEW";
    } else {
      c.base = side_of(*bv, base, options);
      c.newly_failing = fails(nv) && !fails(*bv);
      c.fixed = fails(*bv) && !fails(nv) && nv.status != status_kind::skipped;
      // Not measured on one side: SKIPPED, or a resource limit (OOM, TIMEOUT) hit.
      const auto unmeasured = [](const variant_result& v) {
        return v.status == status_kind::skipped || hit_limit(v.status);
      };
      if (unmeasured(*bv) || unmeasured(nv)) {
        c.kind = pairing::skipped;
        const bool in_new = unmeasured(nv), in_base = unmeasured(*bv);
        const std::string& reason = in_new ? nv.reason : bv->reason;
        c.note = fmt::format("{} in {}{}", to_string(in_new ? nv.status : bv->status),
                             in_new && in_base ? "BASE and NEW"
                             : in_new          ? "NEW"
                                               : "BASE",
                             reason.empty() ? "" : ": " + reason);
      } else {
        c.kind = pairing::compared;
        judge_throughput(c, *bv, base, nv, candidate, options);
      }
    }
    out.variants.push_back(std::move(c));
  }
  for (const auto& bv : base.variants) {
    if (find(candidate, bv.name) != nullptr) continue;
    variant_comparison c;
    c.name = bv.name;
    c.kind = pairing::removed;
    c.base = side_of(bv, base, options);
    c.note = "only in BASE";
    out.variants.push_back(std::move(c));
  }
  return out;
}

}  // namespace attnbench
