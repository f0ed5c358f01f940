#include "report/ab_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "stats/summary.hpp"

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }
std::string num3(double v) { return std::isfinite(v) ? fmt::format("{:.3g}", v) : "n/a"; }
std::string num4(double v) { return std::isfinite(v) ? fmt::format("{:.4f}", v) : "n/a"; }
std::string pct(double fraction) { return std::isfinite(fraction) ? fmt::format("{:.1f}%", fraction * 100) : "n/a"; }

ab_side side_of(const variant_result& v) {
  return ab_side{v.status, v.reason, v.throughput, v.latency_ms};
}

ojson to_json(const ab_side& s) {
  return ojson{{"status", to_string(s.status)},
               {"reason", s.reason},
               {"samples_per_s", number(s.throughput.geomean)},
               {"samples_per_s_ci_low", number(s.throughput.geomean_ci_low)},
               {"samples_per_s_ci_high", number(s.throughput.geomean_ci_high)},
               {"samples", s.throughput.samples},
               {"latency_ms", {{"p50", number(s.latency_ms.p50)}, {"p90", number(s.latency_ms.p90)},
                               {"p99", number(s.latency_ms.p99)}}}};
}

std::string interval_text(double centre, double low, double high) {
  if (!std::isfinite(centre)) return "n/a";
  if (!std::isfinite(low) || !std::isfinite(high)) return num4(centre) + " (no interval)";
  return fmt::format("{} [{}–{}]", num4(centre), num4(low), num4(high));
}

}  // namespace

std::string to_string(ab_verdict v) {
  switch (v) {
    case ab_verdict::same: return "SAME";
    case ab_verdict::faster: return "FASTER";
    case ab_verdict::slower: return "SLOWER";
    case ab_verdict::fail: return "FAIL";
    case ab_verdict::skipped: return "SKIPPED";
  }
  return "SAME";
}

ab_verdict ratio_verdict(const speedup_summary& ratio, double threshold) {
  const double c = ratio.geomean, lo = ratio.geomean_ci_low, hi = ratio.geomean_ci_high;
  if (!std::isfinite(c) || !std::isfinite(lo) || !std::isfinite(hi)) return ab_verdict::same;
  if (hi < 1 && c < 1 / (1 + threshold)) return ab_verdict::slower;
  if (lo > 1 && c > 1 + threshold) return ab_verdict::faster;
  return ab_verdict::same;
}

bool ab_report::regressed() const {
  for (const auto& r : rows)
    if (r.verdict == ab_verdict::slower || r.verdict == ab_verdict::fail) return true;
  return false;
}

ab_row ab_row_of(const std::string& variant, const run_result& pair, double threshold) {
  ab_row row;
  row.variant = variant;
  if (pair.variants.size() != 2) {
    row.verdict = ab_verdict::fail;
    row.reason = "the run did not measure both builds";
    return row;
  }
  const variant_result& b = pair.variants[0];
  const variant_result& c = pair.variants[1];
  row.base = side_of(b);
  row.candidate = side_of(c);
  row.check = c.check;
  row.ratio = c.speedup;
  row.ratio_rel_half_width = c.speedup.relative_half_width();
  row.rounds = std::min(b.repetition.rounds, c.repetition.rounds);
  row.stop_reason = pair.stop_reason;
  row.noisy = b.repetition.noisy || c.repetition.noisy;
  for (const auto& n : c.notes) row.notes.push_back(n);
  if (b.status == status_kind::skipped && c.status == status_kind::skipped) {
    row.verdict = ab_verdict::skipped;
    row.reason = b.reason.empty() ? c.reason : b.reason;
    return row;
  }
  if (b.status != status_kind::pass) {
    row.verdict = ab_verdict::fail;
    row.reason = fmt::format("the base build: {} {}", to_string(b.status), b.reason);
    return row;
  }
  if (c.status != status_kind::pass) {
    row.verdict = ab_verdict::fail;
    // The check is the candidate's against the base's: a FAIL there is "computes something else".
    row.reason = c.check.status == status_kind::fail && c.reason == c.check.message
                     ? "the candidate's outputs differ from the base build's: " + c.check.message
                     : fmt::format("the candidate build: {} {}", to_string(c.status), c.reason);
    return row;
  }
  row.verdict = ratio_verdict(row.ratio, threshold);
  return row;
}

nlohmann::ordered_json ab_report_to_json(const ab_report& r) {
  ojson rows = ojson::array();
  for (const auto& row : r.rows) {
    ojson notes = ojson::array();
    for (const auto& n : row.notes) notes.push_back(n);
    rows.push_back(ojson{
        {"variant", row.variant},
        {"verdict", to_string(row.verdict)},
        {"reason", row.reason},
        {"ratio", number(row.ratio.geomean)},
        {"ratio_ci_low", number(row.ratio.geomean_ci_low)},
        {"ratio_ci_high", number(row.ratio.geomean_ci_high)},
        {"ratio_method", to_string(row.ratio.method)},
        {"ratio_rel_half_width", number(row.ratio_rel_half_width)},
        {"rounds", row.rounds},
        {"stop_reason", row.stop_reason},
        {"noisy", row.noisy},
        {"base", to_json(row.base)},
        {"candidate", to_json(row.candidate)},
        {"check", {{"status", to_string(row.check.status)}, {"message", row.check.message},
                   {"tolerance", number(row.check.tolerance)}, {"rel_l2", number(row.check.rel_l2)},
                   {"max_abs", number(row.check.max_abs)}}},
        {"notes", notes}});
  }
  const auto build = [](const ab_build& b) { return ojson{{"binary", b.binary}, {"version", b.version}}; };
  const environment_info& e = r.environment;
  return ojson{{"kind", "attnbench-ab"},
               {"schema_version", 1},
               {"config", r.config_path},
               {"config_name", r.config_name},
               {"config_hash", r.config_hash},
               {"base", build(r.base)},
               {"candidate", build(r.candidate)},
               {"threshold", r.threshold},
               {"repetition_mode", r.repetition_mode},
               {"target_rel_half_width", number(r.target_rel_half_width)},
               {"environment", {{"cpu_model", e.cpu_model}, {"cpu_id", e.cpu_id}, {"cpu_count", e.cpu_count},
                                {"device", e.device}, {"threads", e.threads}, {"hostname", e.hostname},
                                {"date", e.date}, {"torch_version", e.torch_version}}},
               {"regressed", r.regressed()},
               {"variants", rows}};
}

std::string ab_report_markdown(const ab_report& r) {
  int64_t slower = 0, failed = 0;
  for (const auto& row : r.rows) {
    slower += row.verdict == ab_verdict::slower;
    failed += row.verdict == ab_verdict::fail;
  }
  std::string md = fmt::format("## attnbench ab: {}\n\n", r.config_name);
  md += r.regressed() ? fmt::format("**REGRESSION**: {} variant{} SLOWER, {} FAIL.\n\n", slower,
                                    slower == 1 ? "" : "s", failed)
                      : "No regression.\n\n";
  md += fmt::format("Base `{}` ({}), candidate `{}` ({}), interleaved in one run on {} ({} thread{}, {}); "
                    "verdict threshold {} (SLOWER: the ratio's 95% interval below 1 and its centre below "
                    "1/(1+threshold)).\n\n",
                    r.base.binary, r.base.version, r.candidate.binary, r.candidate.version, r.environment.cpu_model,
                    r.environment.threads, r.environment.threads == 1 ? "" : "s", r.environment.date,
                    pct(r.threshold));
  md += "| variant | verdict | candidate ÷ base [95% CI] | ± | base samples/s | candidate samples/s | rounds | "
        "outputs |\n";
  md += "|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& row : r.rows) {
    const std::string outputs =
        row.check.status == status_kind::pass
            ? fmt::format("PASS (rel L2 {})", std::isfinite(row.check.rel_l2) ? fmt::format("{:.1e}", row.check.rel_l2) : "n/a")
            : to_string(row.check.status);
    md += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} | {} |\n", row.variant, to_string(row.verdict),
                      row.noisy ? " (noisy)" : "",
                      interval_text(row.ratio.geomean, row.ratio.geomean_ci_low, row.ratio.geomean_ci_high),
                      pct(row.ratio_rel_half_width), num3(row.base.throughput.geomean),
                      num3(row.candidate.throughput.geomean), row.rounds, outputs);
  }
  md += "\n";
  for (const auto& row : r.rows) {
    if (!row.reason.empty()) md += fmt::format("- {} {}: {}\n", to_string(row.verdict), row.variant, row.reason);
    if (row.noisy)
      md += fmt::format("- {}: the ratio's interval missed the target ±{} when the rounds stopped ({})\n", row.variant,
                        pct(r.target_rel_half_width), row.stop_reason);
    for (const auto& n : row.notes) md += fmt::format("- {}: {}\n", row.variant, n);
  }
  return md;
}

junit_suite junit_suite_of(const ab_report& r) {
  junit_suite suite;
  suite.name = "attnbench.ab." + r.config_name;
  suite.timestamp = r.environment.date;
  suite.hostname = r.environment.hostname;
  for (const auto& row : r.rows) {
    junit_case c;
    c.classname = "ab." + r.config_name;
    c.name = row.variant;
    const std::string figures =
        fmt::format("candidate ÷ base {} over {} rounds; base {} samples/s, candidate {} samples/s",
                    interval_text(row.ratio.geomean, row.ratio.geomean_ci_low, row.ratio.geomean_ci_high),
                    row.rounds, num3(row.base.throughput.geomean), num3(row.candidate.throughput.geomean));
    switch (row.verdict) {
      case ab_verdict::slower:
        c.result = junit_case::outcome::failed;
        c.message = fmt::format("SLOWER: {} of the base's throughput", num4(row.ratio.geomean));
        c.detail = figures;
        break;
      case ab_verdict::fail:
        c.result = junit_case::outcome::failed;
        c.message = "FAIL: " + row.reason;
        c.detail = figures;
        break;
      case ab_verdict::skipped:
        c.result = junit_case::outcome::skipped;
        c.message = row.reason;
        break;
      default:
        c.output = to_string(row.verdict) + ": " + figures + (row.noisy ? " (noisy)" : "");
        break;
    }
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

}  // namespace attnbench
