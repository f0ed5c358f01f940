#include "report/comparison_markdown.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "report/markdown_writer.hpp"

namespace attnbench {
namespace {

constexpr const char* not_available = "n/a";
constexpr const char* em_dash = "—";  // the side that is absent

std::string percent(double fraction) { return fmt::format("{:g}%", fraction * 100); }

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

// Normalised values are samples/s per GFLOP/s, ~1e-3..1: significant digits, not decimals.
std::string value(double v, bool normalised) { return normalised ? fmt::format("{:.4g}", v) : fmt::format("{:.2f}", v); }

std::string throughput_cell(const compared_side& s, bool measured, bool normalised) {
  if (!s.present) return em_dash;
  if (!measured || !std::isfinite(s.geomean)) return not_available;
  std::string text;
  if (!std::isfinite(s.geomean_ci_low) || !std::isfinite(s.geomean_ci_high))
    text = fmt::format("{} [{}] (n={})", value(s.geomean, normalised), not_available, s.n);  // one repetition: no interval
  else
    text = fmt::format("{} [{}–{}] (n={})", value(s.geomean, normalised), value(s.geomean_ci_low, normalised),
                       value(s.geomean_ci_high, normalised), s.n);
  if (normalised) text += fmt::format(" ÷ {} {:.4g}", s.compute_dtype, s.ceiling_gflops);
  return text;
}

std::string change_cell(const variant_comparison& v) {
  if (!std::isfinite(v.change)) return em_dash;
  std::string text = fmt::format("{:+.1f}%", v.change * 100);
  if (std::isfinite(v.change_ci_low) && std::isfinite(v.change_ci_high))
    return text + fmt::format(" [{:+.1f}%, {:+.1f}%]", v.change_ci_low * 100, v.change_ci_high * 100);
  return text + fmt::format(" [{}]", not_available);
}

std::string p_cell(const variant_comparison& v) {
  if (!std::isfinite(v.p_value)) return em_dash;
  return fmt::format("{:.2g} ({})", v.p_value, v.method);
}

std::string verdict_cell(const variant_comparison& v) {
  if (!v.has_verdict) return to_string(v.kind);
  const std::string text = to_string(v.outcome);
  return v.outcome == verdict::slower ? "**" + text + "**" : text;
}

std::string check_cell(const variant_comparison& v) {
  const auto side = [](const compared_side& s) { return s.present ? to_string(s.check_status) : em_dash; };
  std::string text = side(v.base) + " → " + side(v.candidate);
  if (v.newly_failing) return "**" + text + "**";
  return text;
}

std::string rel_l2_cell(const variant_comparison& v) {
  const auto side = [](const compared_side& s) {
    if (!s.present) return std::string(em_dash);
    return std::isfinite(s.rel_l2) ? fmt::format("{:.2e}", s.rel_l2) : std::string(not_available);
  };
  return side(v.base) + " → " + side(v.candidate);
}

void row(std::string& out, const std::vector<std::string>& cells) {
  out += '|';
  for (const auto& c : cells) out += ' ' + c + " |";
  out += '\n';
}

std::string names_of(const comparison& c, bool (*pick)(const variant_comparison&)) {
  std::string out;
  for (const auto& v : c.variants)
    if (pick(v)) out += (out.empty() ? "" : ", ") + markdown_cell(v.name);
  return out;
}

std::string result_line(const comparison& c) {
  const std::string threshold = percent(c.options.threshold);
  if (c.regressed()) {
    std::string out = "**Result: REGRESSION.**";
    const int64_t slower = c.count(verdict::slower);
    if (slower > 0)
      out += fmt::format(" {} SLOWER by more than {}: {}.", slower, threshold,
                         names_of(c, [](const variant_comparison& v) {
                           return v.has_verdict && v.outcome == verdict::slower;
                         }));
    if (c.newly_failing() > 0)
      out += fmt::format(" {} newly failing the output check: {}.", c.newly_failing(),
                         names_of(c, [](const variant_comparison& v) { return v.newly_failing; }));
    return out;
  }
  return fmt::format(
      "**Result: no regression.** {} compared: {} SAME, {} FASTER, {} NOISY; {} added, {} removed, {} "
      "skipped.",
      c.count(pairing::compared), c.count(verdict::same), c.count(verdict::faster), c.count(verdict::noisy),
      c.count(pairing::added), c.count(pairing::removed), c.count(pairing::skipped));
}

std::string identity_row(const char* side, const run_identity& r) {
  return fmt::format("| {} | `{}` | {} | `{}` | {} | {} |\n", side, markdown_cell(r.path),
                     markdown_cell(r.name), markdown_cell(or_unknown(r.git_commit)),
                     markdown_cell(or_unknown(r.date)), markdown_cell(or_unknown(r.device_name)));
}

}  // namespace

std::string comparison_markdown(const comparison& c) {
  std::string out = fmt::format("## attnbench compare: {}\n\n", markdown_cell(c.candidate.name));
  out += result_line(c) + "\n\n";
  out += "| | file | run | commit | date | device |\n| --- | --- | --- | --- | --- | --- |\n";
  out += identity_row("BASE", c.base) + identity_row("NEW", c.candidate) + '\n';
  out += fmt::format(
      "Throughput: the geometric mean of the per-repetition samples/s, in brackets its 95% CI (Student t "
      "on the logs); change: the ratio of the geometric means − 1, in brackets its 95% CI (Welch t on the "
      "logs, the runs being independent). Verdict: a two-sided Mann-Whitney U test of the per-repetition "
      "samples/s (exact without ties when a side has at most 8 repetitions, else the normal approximation); "
      "SLOWER or FASTER when p < {:g} and the change exceeds {}. Exit status 1 on any SLOWER variant or "
      "newly failing check.\n\n",
      c.options.alpha, percent(c.options.threshold));
  const bool normalised = c.options.normalize == normalization::ceiling;
  if (normalised)
    out +=
        "Normalised (`--normalize ceiling`): every per-repetition throughput is divided by its own run's "
        "measured matmul ceiling (GFLOP/s) for the variant's dtype, shown after ÷; the test, the change and the "
        "verdict are of samples/s per GFLOP/s of ceiling, so a runner that is faster or slower at GEMMs moves "
        "both sides alike, and a slower code path still reads as SLOWER.\n\n";
  for (const auto& w : c.warnings) out += "> **Warning:** " + markdown_cell(w) + "  \n";
  if (!c.warnings.empty())
    out += "> The runs may not be comparable; `--strict` makes this an error (exit 2).\n\n";

  const std::string unit = normalised ? "samples/s per GFLOP/s" : "samples/s";
  row(out, {"Variant", "BASE (" + unit + ")", "NEW (" + unit + ")", "Change", "p-value", "Verdict", "Check",
            "rel. L2 err"});
  row(out, {"---", "---:", "---:", "---:", "---:", "---", "---", "---"});
  for (const auto& v : c.variants) {
    const bool measured =
        v.kind == pairing::compared || v.kind == pairing::added || v.kind == pairing::removed;
    row(out,
        {markdown_cell(v.name), throughput_cell(v.base, measured && v.base.status != status_kind::skipped, normalised),
         throughput_cell(v.candidate, measured && v.candidate.status != status_kind::skipped, normalised),
         change_cell(v),
         p_cell(v), verdict_cell(v), check_cell(v), rel_l2_cell(v)});
  }
  std::string notes;
  for (const auto& v : c.variants) {
    std::string note = v.note;
    if (v.newly_failing) note += std::string(note.empty() ? "" : "; ") + "output check newly FAIL";
    if (v.fixed) note += std::string(note.empty() ? "" : "; ") + "output check FAIL in BASE, PASS in NEW";
    if (!note.empty()) notes += "- " + markdown_cell(v.name) + ": " + note + '\n';
  }
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

}  // namespace attnbench
