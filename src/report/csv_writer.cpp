#include "report/csv_writer.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

namespace attnbench {
namespace {

// RFC 4180: quote a field holding a comma, a quote or a line break; double inner quotes.
std::string quoted(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// Shortest text that reads back to the same double; undefined values are empty fields.
std::string number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string{}; }

std::string bytes(int64_t b) { return b < 0 ? std::string{} : std::to_string(b); }

// Columns only some runs have, appended after the fixed ones so existing readers keep theirs.
std::vector<std::string> optional_header(bool notes, bool train) {
  std::vector<std::string> h;
  if (notes) h.push_back("notes");
  if (train)
    h.insert(h.end(), {"checkpointing", "train_steps", "final_loss", "loss_rel_err", "grad_rel_l2", "weight_rel_l2",
                       "weight_bytes", "gradient_bytes", "optimizer_state_bytes", "activation_peak_bytes"});
  return h;
}

std::vector<std::string> optional_fields(const variant_result& v, bool notes, bool train) {
  std::vector<std::string> f;
  if (notes) f.push_back(quoted(fmt::format("{}", fmt::join(v.notes, "; "))));
  if (!train) return f;
  if (!v.train) {
    f.resize(f.size() + optional_header(false, true).size());
    return f;
  }
  const train_result& t = *v.train;
  f.insert(f.end(), {quoted(t.checkpointing), std::to_string(t.steps), number(t.losses.empty() ? not_a_number : t.losses.back()),
                     number(t.loss_rel_err), number(t.grad_rel_l2), number(t.weight_rel_l2), bytes(t.weight_bytes),
                     bytes(t.gradient_bytes), bytes(t.optimizer_state_bytes), bytes(t.activation_peak_bytes)});
  return f;
}

void write_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << fields[i];
  out << '\n';  // LF rather than RFC 4180's CRLF: files are committed and diffed; readers accept both
}

}  // namespace

void csv_writer::do_write(const run_result& result, std::ostream& out) const {
  const auto any = [&](auto has) { return std::any_of(result.variants.begin(), result.variants.end(), has); };
  const bool notes = any([](const variant_result& v) { return !v.notes.empty(); });
  const bool train = any([](const variant_result& v) { return v.train.has_value(); });
  std::vector<std::string> header{"name",
                  "status",
                  "precision",
                  "attention",
                  "sdpa_backend_used",
                  "batching",
                  "throughput_median",
                  "throughput_ci_low",
                  "throughput_ci_high",
                  "throughput_stddev",
                  "speedup_median",
                  "speedup_ci_low",
                  "speedup_ci_high",
                  "tokens_per_s_median",
                  "latency_p50_ms",
                  "latency_p90_ms",
                  "latency_p99_ms",
                  "peak_memory_bytes",
                  "achieved_gflops",
                  "ceiling_share",
                  "max_abs",
                  "rel_l2",
                  "cosine",
                  "top1_agreement",
                  "top1_agreement_decisive",
                  "padding_efficiency",
                  "mean_batch_size",
                  "cache_hit_rate",
                  "max_sustainable_rate",
                  "reason"};
  for (auto& h : optional_header(notes, train)) header.push_back(std::move(h));
  write_row(out, header);
  for (const auto& v : result.variants) {
    std::vector<std::string> row{quoted(v.name),
                    to_string(v.status),
                    quoted(v.precision),
                    quoted(v.attention),
                    quoted(v.sdpa_backend_used),
                    quoted(v.batching),
                    number(v.throughput.median),
                    number(v.throughput.ci_low),
                    number(v.throughput.ci_high),
                    number(v.throughput.stddev),
                    number(v.speedup.median),
                    number(v.speedup.ci_low),
                    number(v.speedup.ci_high),
                    number(v.tokens_per_s.median),
                    number(v.latency_ms.p50),
                    number(v.latency_ms.p90),
                    number(v.latency_ms.p99),
                    v.peak_memory_bytes < 0 ? std::string{} : std::to_string(v.peak_memory_bytes),
                    number(v.achieved_gflops),
                    number(v.ceiling_share),
                    number(v.check.max_abs),
                    number(v.check.rel_l2),
                    number(v.check.cosine),
                    number(v.check.top1_agreement),
                    number(v.check.top1_agreement_decisive),
                    number(v.padding_efficiency),
                    number(v.mean_batch_size),
                    number(v.cache_hit_rate),
                    number(v.max_sustainable_rate),
                    quoted(v.reason)};
    for (auto& f : optional_fields(v, notes, train)) row.push_back(std::move(f));
    write_row(out, row);
  }
}

}  // namespace attnbench
