#include "report/attention_table.hpp"

#include "report/ceilings.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/csv_writer.hpp"

namespace attnbench {
namespace {

std::string num(double x, const char* spec) {
  return std::isnan(x) ? "–" : fmt::format(fmt::runtime(spec), x);
}
std::string csv_num(double x) { return std::isnan(x) ? "" : fmt::format("{:.6g}", x); }
std::string mib(int64_t bytes) {
  return bytes < 0 ? "–" : fmt::format("{:.2f}", static_cast<double>(bytes) / (1024.0 * 1024.0));
}
}  // namespace

int64_t attention_key_length(const attention_point& p) {
  const auto l = static_cast<int64_t>(std::llround(p.valid * static_cast<double>(p.seq)));
  return std::clamp<int64_t>(l, 1, p.seq);
}

double attention_flops(const attention_point& p) {
  const double s = static_cast<double>(p.seq), l = static_cast<double>(attention_key_length(p));
  // Query-key pairs computed: S·L, or under the causal triangle S·L − L²/2 (S²/2 without padding).
  const double pairs = p.causal ? s * l - l * l / 2 : s * l;
  return 4.0 * static_cast<double>(p.batch) * static_cast<double>(p.heads) * pairs * static_cast<double>(p.head_dim);
}

std::string to_string(attention_status s) {
  switch (s) {
    case attention_status::fail:
      return "FAIL";
    case attention_status::oom:
      return "OOM";
    case attention_status::unsupported:
      return "unsupported";
    case attention_status::ok:
      break;
  }
  return "ok";
}

std::string attention_markdown(const std::vector<attention_row>& rows,
                               const std::vector<attention_ceiling>& ceilings) {
  // Only the grid's varying dimensions get a column; the fixed ones are stated once above.
  std::set<int64_t> b, h, s, d;
  std::set<bool> c;
  std::set<std::string> t;
  std::set<double> valid;
  bool shares = false;
  for (const auto& r : rows) {
    b.insert(r.point.batch);
    h.insert(r.point.heads);
    s.insert(r.point.seq);
    d.insert(r.point.head_dim);
    c.insert(r.point.causal);
    t.insert(r.point.dtype);
    valid.insert(r.point.valid);
    shares = shares || !std::isnan(r.ceiling_share);
  }
  const auto valid_text = [](double v) { return fmt::format("{:g}% of keys real", 100 * v); };
  std::string out;
  std::vector<std::string> fixed;
  if (b.size() == 1) fixed.push_back(fmt::format("batch {}", *b.begin()));
  if (h.size() == 1) fixed.push_back(fmt::format("heads {}", *h.begin()));
  if (s.size() == 1) fixed.push_back(fmt::format("seq {}", *s.begin()));
  if (d.size() == 1) fixed.push_back(fmt::format("head_dim {}", *d.begin()));
  if (c.size() == 1) fixed.push_back(*c.begin() ? "causal" : "not causal");
  if (t.size() == 1) fixed.push_back(*t.begin());
  if (valid.size() == 1 && *valid.begin() != 1.0) fixed.push_back(valid_text(*valid.begin()));
  if (!fixed.empty()) {
    out += "Fixed: ";
    for (std::size_t i = 0; i < fixed.size(); ++i) out += (i ? ", " : "") + fixed[i];
    out += ".\n\n";
  }
  std::string head = "|", rule = "|";
  const auto col = [&](bool show, const char* name, const char* align) {
    if (!show) return;
    head += fmt::format(" {} |", name);
    rule += align;
  };
  col(b.size() > 1, "Batch", "---:|");
  col(h.size() > 1, "Heads", "---:|");
  col(s.size() > 1, "Seq", "---:|");
  col(d.size() > 1, "Head dim", "---:|");
  col(c.size() > 1, "Causal", "---|");
  col(t.size() > 1, "Dtype", "---|");
  col(valid.size() > 1, "Real keys", "---:|");
  head += " Implementation | Status | rel L2 | Median (ms) | TFLOP/s |";
  rule += "---|---|---:|---:|---:|";
  col(shares, "Of ceiling", "---:|");
  head += " Peak MiB | Speedup vs naive |";
  rule += "---:|---:|";
  out += head + "\n" + rule + "\n";
  for (const auto& r : rows) {
    std::string line = "|";
    if (b.size() > 1) line += fmt::format(" {} |", r.point.batch);
    if (h.size() > 1) line += fmt::format(" {} |", r.point.heads);
    if (s.size() > 1) line += fmt::format(" {} |", r.point.seq);
    if (d.size() > 1) line += fmt::format(" {} |", r.point.head_dim);
    if (c.size() > 1) line += r.point.causal ? " yes |" : " no |";
    if (t.size() > 1) line += fmt::format(" {} |", r.point.dtype);
    if (valid.size() > 1) line += fmt::format(" {:g}% |", 100 * r.point.valid);
    line += fmt::format(" {} | {} | {} | {} | {} |", r.impl, to_string(r.status), num(r.rel_l2, "{:.2e}"),
                        num(r.median_ms, "{:.3f}"), num(r.tflops, "{:.4f}"));
    if (shares) line += std::isnan(r.ceiling_share) ? " – |" : fmt::format(" {:.0f}% |", 100 * r.ceiling_share);
    line += fmt::format(" {} | {} |\n", mib(r.peak_bytes),
                        std::isnan(r.speedup) ? "–" : fmt::format("{:.2f}×", r.speedup));
    out += line;
  }
  // Which code path each multi-path implementation ran, per dtype.
  std::map<std::string, std::set<std::string>> paths;
  for (const auto& r : rows)
    if (!r.code_path.empty()) paths[r.impl].insert(fmt::format("{} for {}", r.code_path, r.point.dtype));
  for (const auto& [impl, list] : paths) {
    out += fmt::format("\n{} code paths, chosen at run time from this machine's features: ", impl);
    std::size_t i = 0;
    for (const auto& x : list) out += (i++ ? ", " : "") + x;
    out += ".\n";
  }
  if (!ceilings.empty()) {
    out += "\nOf ceiling: TFLOP/s over the matmul ceiling measured in this run (";
    for (std::size_t i = 0; i < ceilings.size(); ++i)
      out += fmt::format("{}{} {:.1f} GFLOP/s ({}, spread {:.1f}%)", i ? ", " : "", ceilings[i].dtype,
                         ceilings[i].gflops, ceilings[i].shape,
                         std::isfinite(ceilings[i].spread) ? 100 * ceilings[i].spread : 0.0);
    out += "; the best over squares and the attention's own batched products, each timed until its best three "
           "calls agree within 3%).\n";
    for (const auto& r : rows)
      for (const auto& c : ceilings)
        if (c.dtype == r.point.dtype && ceiling_share_is_bug(r.ceiling_share, c.spread)) {
          out += fmt::format("\nerror: {} at S = {} reached {:.0f}% of the {} ceiling, beyond its spread: the ceiling "
                             "is not a ceiling there (a bug of the measurement); that share is not meaningful.\n",
                             r.impl, r.point.seq, 100 * r.ceiling_share, c.dtype);
          break;
        }
    // A reduced-precision GEMM slower than fp32's (no native bf16: LibTorch's reference GEMM):
    // implementations that widen to fp32 pass its ceiling, and their share says only that.
    double fp32 = 0;
    for (const auto& c : ceilings)
      if (c.dtype == "fp32") fp32 = c.gflops;
    for (const auto& c : ceilings)
      if (c.dtype != "fp32" && fp32 > 0 && c.gflops < fp32)
        out += fmt::format(
            "The {} ceiling is below fp32's on this device (no native {} matmul): an implementation that "
            "computes {} in fp32 passes it, so a share over 100% there means it avoids {} GEMMs, not that it "
            "beats the hardware; compare such rows by time.\n",
            c.dtype, c.dtype, c.dtype, c.dtype);
  }
  std::string notes;
  for (const auto& r : rows)
    if (r.status != attention_status::ok)
      notes += fmt::format("- {} at B={} H={} S={} D={}{} {}{}: {} — {}\n", r.impl, r.point.batch,
                           r.point.heads, r.point.seq, r.point.head_dim, r.point.causal ? " causal" : "",
                           r.point.dtype, r.point.valid == 1.0 ? "" : " " + valid_text(r.point.valid),
                           to_string(r.status), r.reason);
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

std::string attention_csv(const std::vector<attention_row>& rows) {
  std::string out =
      "batch,heads,seq,head_dim,causal,dtype,impl,status,reason,rel_l2,tolerance,repetitions,median_ms,min_"
      "ms,"
      "flops,tflops,peak_bytes,speedup_vs_naive,valid,key_length,ceiling_share,code_path\n";
  for (const auto& r : rows)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{},{},{},{:g},{},{},{}\n", r.point.batch,
                       r.point.heads, r.point.seq, r.point.head_dim, r.point.causal ? "true" : "false",
                       r.point.dtype, csv_quoted(r.impl), to_string(r.status), csv_quoted(r.reason),
                       csv_num(r.rel_l2), csv_num(r.tolerance), r.repetitions, csv_num(r.median_ms),
                       csv_num(r.min_ms), attention_flops(r.point), csv_num(r.tflops),
                       r.peak_bytes < 0 ? "" : std::to_string(r.peak_bytes), csv_num(r.speedup), r.point.valid,
                       attention_key_length(r.point), csv_num(r.ceiling_share), csv_quoted(r.code_path));
  return out;
}

}  // namespace attnbench
