#include "report/comparison_json.hpp"

#include <cmath>

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

ojson to_json(const run_identity& r) {
  return {{"path", r.path},
          {"name", r.name},
          {"git_commit", r.git_commit},
          {"date", r.date},
          {"device_name", r.device_name}};
}

ojson to_json(const compared_side& s) {
  if (!s.present) return nullptr;
  return {{"status", to_string(s.status)},
          {"check_status", to_string(s.check_status)},
          {"rel_l2", number(s.rel_l2)},
          {"n", s.n},
          {"geomean", number(s.geomean)},
          {"geomean_ci_low", number(s.geomean_ci_low)},
          {"geomean_ci_high", number(s.geomean_ci_high)},
          {"compute_dtype", s.compute_dtype},
          {"ceiling_gflops", number(s.ceiling_gflops)}};
}

ojson to_json(const variant_comparison& v) {
  return {{"name", v.name},
          {"pairing", to_string(v.kind)},
          {"base", to_json(v.base)},
          {"new", to_json(v.candidate)},
          {"geomean_change", number(v.change)},
          {"geomean_change_ci_low", number(v.change_ci_low)},
          {"geomean_change_ci_high", number(v.change_ci_high)},
          {"u", number(v.u)},
          {"p_value", number(v.p_value)},
          {"method", v.method.empty() ? ojson(nullptr) : ojson(v.method)},
          {"min_p", number(v.min_p)},
          {"verdict", v.has_verdict ? ojson(to_string(v.outcome)) : ojson(nullptr)},
          {"newly_failing", v.newly_failing},
          {"fixed", v.fixed},
          {"regression", v.regression()},
          {"note", v.note}};
}

}  // namespace

ojson comparison_to_json(const comparison& c) {
  ojson variants = ojson::array();
  for (const auto& v : c.variants) variants.push_back(to_json(v));
  return {{"schema_version", comparison_schema_version},
          {"base", to_json(c.base)},
          {"new", to_json(c.candidate)},
          {"threshold", c.options.threshold},
          {"alpha", c.options.alpha},
          {"normalize", to_string(c.options.normalize)},
          {"test", c.options.normalize == normalization::ceiling
                       ? "two-sided Mann-Whitney U of per-repetition throughput per GFLOP/s of the run's matmul "
                         "ceiling for the variant's dtype"
                       : "two-sided Mann-Whitney U of per-repetition throughput (samples/s)"},
          {"warnings", c.warnings},
          {"summary",
           {{"compared", c.count(pairing::compared)},
            {"same", c.count(verdict::same)},
            {"faster", c.count(verdict::faster)},
            {"slower", c.count(verdict::slower)},
            {"noisy", c.count(verdict::noisy)},
            {"newly_failing", c.newly_failing()},
            {"added", c.count(pairing::added)},
            {"removed", c.count(pairing::removed)},
            {"skipped", c.count(pairing::skipped)},
            {"regressions", c.regressions()}}},
          {"regression", c.regressed()},
          {"variants", variants}};
}

}  // namespace attnbench
