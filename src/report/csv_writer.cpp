#include "report/csv_writer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

namespace attnbench {

// RFC 4180: quote a field holding a comma, a quote or a line break; double inner quotes.
std::string csv_quoted(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

namespace {

std::string quoted(const std::string& field) { return csv_quoted(field); }

// Shortest text that reads back to the same double; undefined values are empty fields.
std::string number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string{}; }

}  // namespace

void write_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << fields[i];
  out << '\n';  // LF rather than RFC 4180's CRLF: files are committed and diffed; readers accept both
}

std::vector<std::string> csv_columns() {
  return {"name",
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
          "offload_resident_weight_bytes",
          "offload_bytes_per_pass",
          "offload_exposed_ms_per_pass",
          "offload_h2d_gb_per_s",
          "reason"};
}

std::vector<std::string> csv_fields(const variant_result& v) {
  return {quoted(v.name),
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
          v.offload.used ? std::to_string(v.offload.resident_weight_bytes) : std::string{},
          v.offload.used ? std::to_string(v.offload.bytes_per_pass) : std::string{},
          number(v.offload.exposed_ms_per_pass),
          number(v.offload.h2d_gb_per_s),
          quoted(v.reason)};
}

void csv_writer::do_write(const run_result& result, std::ostream& out) const {
  write_csv_row(out, csv_columns());
  for (const auto& v : result.variants) write_csv_row(out, csv_fields(v));
}

}  // namespace attnbench
