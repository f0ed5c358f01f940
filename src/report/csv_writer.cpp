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

std::string quoted(const std::string& field) { return csv_quoted(field); }

// Shortest text that reads back to the same double; undefined values are empty fields.
std::string number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string{}; }

std::string bytes(int64_t b) { return b < 0 ? std::string{} : std::to_string(b); }

// "logits" | "embedding"; empty when nothing was compared.
std::string check_output(const check_result& c) {
  return c.status == status_kind::skipped ? std::string{} : to_string(c.output);
}

// A count of the prediction check: empty when there is none (nothing compared, an older file).
std::string count_cell(const check_result& c, int64_t n) {
  return has_prediction_count(c) ? std::to_string(n) : std::string{};
}

const std::vector<std::string> train_columns{"checkpointing",  "train_steps",   "final_loss",
                                             "loss_rel_err",   "grad_rel_l2",   "weight_rel_l2",
                                             "weight_bytes",   "gradient_bytes", "optimizer_state_bytes",
                                             "activation_peak_bytes"};
const std::vector<std::string> offload_columns{"offload_resident_weight_bytes", "offload_full_weight_bytes",
                                               "offload_bytes_per_pass", "offload_copy_ms_per_pass",
                                               "offload_exposed_ms_per_pass", "offload_h2d_gb_per_s",
                                               "offload_d2h_bytes_per_pass"};
const std::vector<std::string> parallel_columns{"parallel_mode", "parallel_world_size", "parallel_imbalance"};
// Per-stage values are joined with ';', stage 0 first.
const std::vector<std::string> pipeline_columns{"pipeline_stages",       "pipeline_micro_batch",
                                                "pipeline_stage_layers", "pipeline_stage_busy_ms_per_pass",
                                                "pipeline_pass_ms",      "pipeline_bubble_fraction"};

const std::vector<std::string> repetition_columns{"rounds", "throughput_rel_half_width",
                                                  "speedup_rel_half_width", "target_met", "noisy"};

}  // namespace

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

void write_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << fields[i];
  out << '\n';  // LF rather than RFC 4180's CRLF: files are committed and diffed; readers accept both
}

void csv_layout::add(const variant_result& v) {
  notes = notes || !v.notes.empty();
  train = train || v.train.has_value();
  offload = offload || v.offload.used;
  parallel = parallel || v.parallel.used;
  pipeline = pipeline || v.pipeline.used;
  repetition = repetition || v.repetition.rounds > 0;
  for (const auto& m : v.metrics)
    if (std::find(metrics.begin(), metrics.end(), m.name) == metrics.end()) metrics.push_back(m.name);
}

csv_layout csv_layout_of(const run_result& result) {
  csv_layout layout;
  for (const auto& v : result.variants) layout.add(v);
  return layout;
}

std::vector<std::string> csv_columns(const csv_layout& layout) {
  std::vector<std::string> h{"name",
                             "status",
                             "precision",
                             "compute_dtype",
                             "attention",
                             "sdpa_backend_used",
                             "batching",
                             "throughput_geomean",
                             "throughput_geomean_ci_low",
                             "throughput_geomean_ci_high",
                             "throughput_median",
                             "throughput_stddev",
                             "speedup_geomean",
                             "speedup_geomean_ci_low",
                             "speedup_geomean_ci_high",
                             "speedup_method",
                             "tokens_per_s_geomean",
                             "latency_p50_ms",
                             "latency_p90_ms",
                             "latency_p99_ms",
                             "peak_memory_bytes",
                             "achieved_gflops",
                             "ceiling_share",
                             "max_abs",
                             "rel_l2",
                             "cosine",
                             "check_output",
                             "cosine_min",
                             "cosine_mean",
                             "top1_agreement",
                             "top1_agreement_decisive",
                             "predictions_kept",
                             "predictions_total",
                             "exempt_flips",
                             "topk_overlap",
                             "padding_efficiency",
                             "mean_batch_size",
                             "cache_hit_rate",
                             "max_sustainable_rate",
                             "reason"};
  // Columns only some runs have, appended after the fixed ones so existing readers keep theirs.
  if (layout.notes) h.push_back("notes");
  if (layout.train) h.insert(h.end(), train_columns.begin(), train_columns.end());
  if (layout.offload) h.insert(h.end(), offload_columns.begin(), offload_columns.end());
  if (layout.parallel) h.insert(h.end(), parallel_columns.begin(), parallel_columns.end());
  if (layout.pipeline) h.insert(h.end(), pipeline_columns.begin(), pipeline_columns.end());
  if (layout.repetition) h.insert(h.end(), repetition_columns.begin(), repetition_columns.end());
  for (const auto& name : layout.metrics) h.push_back("metric_" + name);
  return h;
}

std::vector<std::string> csv_fields(const variant_result& v, const csv_layout& layout) {
  std::vector<std::string> f{quoted(v.name),
                             to_string(v.status),
                             quoted(v.precision),
                             quoted(v.compute_dtype),
                             quoted(v.attention),
                             quoted(v.sdpa_backend_used),
                             quoted(v.batching),
                             number(v.throughput.geomean),
                             number(v.throughput.geomean_ci_low),
                             number(v.throughput.geomean_ci_high),
                             number(v.throughput.median),
                             number(v.throughput.stddev),
                             number(v.speedup.geomean),
                             number(v.speedup.geomean_ci_low),
                             number(v.speedup.geomean_ci_high),
                             v.speedup.method == speedup_method::none ? "" : to_string(v.speedup.method),
                             number(v.tokens_per_s.geomean),
                             number(v.latency_ms.p50),
                             number(v.latency_ms.p90),
                             number(v.latency_ms.p99),
                             bytes(v.peak_memory_bytes),
                             number(v.achieved_gflops),
                             number(v.ceiling_share),
                             number(v.check.max_abs),
                             number(v.check.rel_l2),
                             number(v.check.cosine),
                             check_output(v.check),
                             number(v.check.cosine_min),
                             number(v.check.cosine_mean),
                             number(v.check.top1_agreement),
                             number(v.check.top1_agreement_decisive),
                             count_cell(v.check, v.check.predictions_kept),
                             count_cell(v.check, v.check.samples),
                             count_cell(v.check, v.check.exempt_flips),
                             number(v.check.topk_overlap),
                             number(v.padding_efficiency),
                             number(v.mean_batch_size),
                             number(v.cache_hit_rate),
                             number(v.max_sustainable_rate),
                             quoted(v.reason)};
  if (layout.notes) f.push_back(quoted(fmt::format("{}", fmt::join(v.notes, "; "))));
  if (layout.train) {
    if (v.train) {
      const train_result& t = *v.train;
      f.insert(f.end(), {quoted(t.checkpointing), std::to_string(t.steps),
                         number(t.losses.empty() ? not_a_number : t.losses.back()), number(t.loss_rel_err),
                         number(t.grad_rel_l2), number(t.weight_rel_l2), bytes(t.weight_bytes),
                         bytes(t.gradient_bytes), bytes(t.optimizer_state_bytes), bytes(t.activation_peak_bytes)});
    } else {
      f.resize(f.size() + train_columns.size());
    }
  }
  if (layout.offload) {
    if (v.offload.used) {
      const offload_info& o = v.offload;
      f.insert(f.end(), {bytes(o.resident_weight_bytes), bytes(o.full_weight_bytes), bytes(o.bytes_per_pass),
                         number(o.copy_ms_per_pass), number(o.exposed_ms_per_pass), number(o.h2d_gb_per_s),
                         bytes(o.d2h_bytes_per_pass)});
    } else {
      f.resize(f.size() + offload_columns.size());
    }
  }
  if (layout.parallel) {
    if (v.parallel.used)
      f.insert(f.end(), {quoted(v.parallel.mode), std::to_string(v.parallel.world_size), number(v.parallel.imbalance)});
    else
      f.resize(f.size() + parallel_columns.size());
  }
  if (layout.pipeline) {
    if (v.pipeline.used) {
      const pipeline_info& p = v.pipeline;
      std::vector<std::string> layers, busy;
      for (const auto& s : p.stages) {
        layers.push_back(fmt::format("{}-{}", s.layer_begin, s.layer_end - 1));
        busy.push_back(number(s.busy_ms_per_pass));
      }
      f.insert(f.end(), {std::to_string(p.stages.size()), std::to_string(p.micro_batch),
                         quoted(fmt::format("{}", fmt::join(layers, ";"))), quoted(fmt::format("{}", fmt::join(busy, ";"))),
                         number(p.pass_ms), number(p.bubble_fraction)});
    } else {
      f.resize(f.size() + pipeline_columns.size());
    }
  }
  if (layout.repetition) {
    const repetition_info& p = v.repetition;
    if (p.rounds > 0)
      f.insert(f.end(), {std::to_string(p.rounds), number(p.throughput_rel_half_width),
                         number(p.speedup_rel_half_width), p.target_met ? "true" : "false",
                         p.noisy ? "true" : "false"});
    else
      f.resize(f.size() + repetition_columns.size());
  }
  for (const auto& name : layout.metrics) {
    const metric* m = find_metric(v.metrics, name);
    f.push_back(m ? number(m->value) : std::string{});
  }
  return f;
}

void csv_writer::do_write(const run_result& result, std::ostream& out) const {
  const csv_layout layout = csv_layout_of(result);
  write_csv_row(out, csv_columns(layout));
  for (const auto& v : result.variants) write_csv_row(out, csv_fields(v, layout));
}

}  // namespace attnbench
