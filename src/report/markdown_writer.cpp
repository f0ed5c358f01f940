#include "report/markdown_writer.hpp"

#include "report/metric_text.hpp"

#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace attnbench {
namespace {

constexpr const char* not_available = "n/a";  // NaN: undefined or not measured
constexpr const char* em_dash = "—";          // a variant that did not run
constexpr double one_decimal_from = 10.0;     // speedups ≥ 10× get 1 decimal, smaller ones 2: 3 digits
constexpr double bytes_per_kib = 1024.0;
constexpr double percent = 100.0;

std::string cell(const std::string& text) { return markdown_cell(text); }

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

std::string fixed(double v, int decimals) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : not_available;
}

void write_row(std::ostream& out, const std::vector<std::string>& cells) {
  out << '|';
  for (const auto& c : cells) out << ' ' << c << " |";
  out << '\n';
}

// The centre's 95% interval, in brackets: the same statistic (README "How it measures"). "[n/a]"
// when there is none (a single round).
std::string interval_text(double low, double high, int decimals) {
  if (!std::isfinite(low) || !std::isfinite(high)) return fmt::format(" [{}]", not_available);
  return fmt::format(" [{}–{}]", fixed(low, decimals), fixed(high, decimals));
}

std::string throughput_cell(const summary& s) {
  constexpr int decimals = 2;
  if (!std::isfinite(s.geomean)) return not_available;
  return fixed(s.geomean, decimals) + interval_text(s.geomean_ci_low, s.geomean_ci_high, decimals);
}

std::string speedup_cell(const variant_result& v) {
  const double m = v.speedup.geomean;
  if (v.is_baseline) return "1.00× (baseline)";
  if (!std::isfinite(m)) return not_available;
  const int decimals = m >= one_decimal_from ? 1 : 2;
  std::string text =
      fixed(m, decimals) + "×" + interval_text(v.speedup.geomean_ci_low, v.speedup.geomean_ci_high, decimals);
  // Rounds that could not be paired (the variant stopped part way): say so, the interval is wider.
  if (v.speedup.method == speedup_method::welch) text += " (unpaired)";
  return text;
}

std::string method_cell(const variant_result& v) {
  // A failed check means the outputs are wrong: its speed must not be read as a result.
  // A noisy variant's interval is wider than the run asked for: its figures need that caveat.
  return cell(v.name) + (v.status == status_kind::fail ? " (FAIL)" : "") +
         (hit_limit(v.status) ? " (" + to_string(v.status) + ")" : "") +
         (v.repetition.noisy ? " (noisy)" : "");
}

std::string percent_cell(double fraction, int decimals) {
  return std::isfinite(fraction) ? fmt::format("{:.{}f}%", fraction * 100.0, decimals) : not_available;
}

// "7", or "30 (±3.1%)": the rounds a variant ran and, beside them, its throughput interval's
// relative half-width (and its speedup's, when wider) — what the adaptive target tests.
std::string rounds_cell(const variant_result& v) {
  const repetition_info& p = v.repetition;
  if (p.rounds == 0) return not_available;
  double widest = p.throughput_rel_half_width;
  if (std::isfinite(p.speedup_rel_half_width) && !(p.speedup_rel_half_width <= widest))
    widest = p.speedup_rel_half_width;
  return fmt::format("{} (±{})", p.rounds, percent_cell(widest, 1));
}

// How the rounds were decided and why they stopped.
void write_repetitions(const run_result& r, std::ostream& out) {
  if (r.repetition_mode == "adaptive") {
    out << fmt::format(
        "Repetitions: adaptive, rounds added until every 95% interval (throughput, speedup) "
        "is within ±{}{}; stopped after {} rounds: {}.",
        percent_cell(r.target_rel_half_width, 1),
        std::isfinite(r.max_time_s) ? fmt::format(", within a {} s budget", fixed(r.max_time_s, 0)) : "",
        r.repetitions, or_unknown(r.stop_reason));
    int64_t noisy = 0;
    for (const auto& v : r.variants) noisy += v.repetition.noisy ? 1 : 0;
    if (noisy > 0)
      out << fmt::format(
          " {} variant{} missed the target and {} flagged (noisy): read {} figures with "
          "their intervals.",
          noisy, noisy == 1 ? "" : "s", noisy == 1 ? "is" : "are", noisy == 1 ? "its" : "their");
    out << '\n';
  } else {
    out << fmt::format("Repetitions: fixed, {} rounds.\n", r.repetitions);
  }
}

std::string human_bytes(int64_t bytes) {
  if (bytes < 0) return not_available;
  constexpr std::array<const char*, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= bytes_per_kib && unit + 1 < units.size()) {
    value /= bytes_per_kib;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

std::string gflops_cell(const variant_result& v) {
  std::string text = fixed(v.achieved_gflops, 1);
  if (std::isfinite(v.achieved_gflops) && std::isfinite(v.ceiling_share))
    text += fmt::format(" ({:.1f}%)", v.ceiling_share * percent);
  return text;
}

std::string scientific(double v) { return std::isfinite(v) ? fmt::format("{:.2e}", v) : not_available; }

std::string share_cell(double fraction) {
  return std::isfinite(fraction) ? fixed(fraction * percent, 1) + "%" : not_available;
}

void write_environment(const run_result& r, std::ostream& out) {
  const environment_info& e = r.environment;
  out << fmt::format("Device `{}` ({}), LibTorch {}", or_unknown(e.device), or_unknown(e.device_name),
                     or_unknown(e.torch_version));
  if (!e.cuda_version.empty()) out << ", CUDA " << e.cuda_version;
  out << fmt::format(", {} threads. Run {} at commit `{}`, attnbench {}.\n", e.threads, or_unknown(e.date),
                     or_unknown(e.git_commit), or_unknown(e.harness_version));
  if (!e.cpu_id.empty()) {
    out << fmt::format("CPU {} ({}), features: {}", or_unknown(e.cpu_model), e.cpu_id,
                       e.cpu_features.empty() ? "none of those that matter here" : fmt::format("{}", fmt::join(e.cpu_features, " ")));
    if (e.cpu_count > 0) out << fmt::format("; {} logical CPUs", e.cpu_count);
    if (!e.cpu_caches.empty()) out << "; caches " << e.cpu_caches;
    out << ".\n";
  }
  if (!e.gpu_capability.empty())
    out << fmt::format("GPU compute capability {}, driver {}, tensor cores: {}.\n", e.gpu_capability,
                       or_unknown(e.gpu_driver),
                       e.gpu_tensor_core_dtypes.empty() ? "none" : fmt::format("{}", fmt::join(e.gpu_tensor_core_dtypes, " ")));
  out << "Matmul ceilings: ";
  if (e.ceilings.empty()) out << "not measured";
  for (size_t i = 0; i < e.ceilings.size(); ++i) {
    const matmul_ceiling& c = e.ceilings[i];
    if (c.shape.empty())  // files written before the shape was recorded
      out << (i ? ", " : "") << fmt::format("{} {} GFLOP/s (n={})", c.dtype, fixed(c.gflops, 1), c.size);
    else
      out << (i ? ", " : "")
          << fmt::format("{} {} GFLOP/s ({}, {} timed calls, spread {})", c.dtype, fixed(c.gflops, 1), c.shape,
                         c.repeats, std::isfinite(c.spread) ? fixed(100 * c.spread, 1) + "%" : "n/a");
  }
  if (!e.ceilings.empty() && !e.ceilings.front().sizes.empty()) {
    // How each was measured, and what it cost: it runs in every run.
    double cost_s = 0;
    for (const auto& c : e.ceilings) cost_s += std::isfinite(c.measure_s) ? c.measure_s : 0;
    const matmul_ceiling& c = e.ceilings.front();
    if (c.shapes.empty())
      out << fmt::format("; each the best of n×n×n GEMMs at n = {}, {} timed repeats each, at {} threads; "
                         "measuring them took {} s",
                         fmt::join(c.sizes, ", "), c.repeats, e.threads, fixed(cost_s, 2));
    else
      out << fmt::format("; each the best over {} product shapes (squares n = {} and the model's own), B as "
                         "stored and transposed, each timed until its best three calls agree within 3%, at {} "
                         "threads; measuring them took {} s",
                         c.shapes.size(), fmt::join(c.sizes, ", "), e.threads, fixed(cost_s, 2));
  }
  out << ".\n";
  const model_info& m = r.model;
  const workload_info& w = r.workload;
  out << fmt::format("Model `{}` ({} layers, hidden {}, {} heads{}); {} samples, lengths {}, mean {}.\n",
                     m.preset, m.layers, m.hidden, m.heads, m.causal ? ", causal" : "", w.samples,
                     or_unknown(w.lengths), fixed(w.mean_length, 1));
  out << fmt::format(
      "Baseline `{}`; warm-up passes: {}; timed repetitions per variant: {}, interleaved (A B C, then C B A). "
      "Throughput is the geometric mean over the rounds, in brackets its 95% CI (Student t on the logs); "
      "speedup is the geometric mean of the per-round ratios to the baseline, in brackets its 95% CI "
      "(paired t on the log ratios).\n",
      r.baseline, r.warmup, r.repetitions);
  write_repetitions(r, out);
  if (r.scenario != "offline") {
    out << "Scenario: " << r.scenario;
    if (std::isfinite(r.latency_bound_ms))
      out << fmt::format(", latency bound p99 ≤ {} ms", fixed(r.latency_bound_ms, 1));
    out << ".\n";
  }
}

bool any_finite(const run_result& r, double variant_result::*field) {
  for (const auto& v : r.variants)
    if (std::isfinite(v.*field)) return true;
  return false;
}

bool any_checked(const run_result& r, output_kind kind) {
  return std::any_of(r.variants.begin(), r.variants.end(), [&](const variant_result& v) {
    return v.check.status != status_kind::skipped && v.check.output == kind;
  });
}

// The least similar sample's cosine, then the mean over samples: "0.999977 (0.999995)".
std::string cosine_cell(const check_result& c) {
  if (c.output != output_kind::embedding || !std::isfinite(c.cosine_min)) return not_available;
  return fmt::format("{} ({})", fixed(c.cosine_min, 6), fixed(c.cosine_mean, 6));
}

// "126 of 128": predictions kept over all samples; the share for a file without the count.
std::string top1_cell(const check_result& c) {
  if (has_prediction_count(c)) return predictions_kept_text(c);
  return c.output == output_kind::logits ? share_cell(c.top1_agreement) : not_available;
}

// "98.4%": the mean top-k overlap with the baseline's candidates.
std::string topk_cell(const check_result& c) {
  return c.topk > 0 ? share_cell(c.topk_overlap) : not_available;
}

// The verdict and, for logits, the predictions it kept: "PASS, predictions kept 128 of 128".
std::string verdict_cell(const variant_result& v) {
  if (v.is_baseline && v.check.status == status_kind::skipped) return "baseline";
  std::string text = status_text(v.check.status == status_kind::skipped ? v.status : v.check.status, v.check);
  if (has_prediction_count(v.check)) text += ", predictions kept " + predictions_kept_text(v.check);
  return text;
}

void write_detail_table(const run_result& r, std::ostream& out) {
  // Pooling and the result cache are measured only by the variants that use them: their
  // columns appear only when some variant has a value.
  const bool cache = any_finite(r, &variant_result::cache_hit_rate);
  const bool allocations = any_finite(r, &variant_result::allocations_per_batch);
  // The check's agreement column follows the output: top-1 for logits, per-sample cosine for
  // embeddings (an argmax over embedding dimensions means nothing).
  const bool embeddings = any_checked(r, output_kind::embedding);
  std::vector<std::string> header = {"Method",     "tokens/s",         "padding efficiency",
                                     "mean batch", "latency p50 (ms)", "latency p99 (ms)"};
  if (cache) header.emplace_back("cache hit rate");
  if (allocations) header.emplace_back("allocations/batch");
  for (const char* h : {"rounds (±CI)", "peak memory", "GFLOP/s (% of ceiling)", "rel. L2 err"}) header.emplace_back(h);
  const bool topk = std::any_of(r.variants.begin(), r.variants.end(),
                                [](const variant_result& v) { return v.check.topk > 0; });
  header.emplace_back("predictions kept");
  if (topk) header.emplace_back("top-5 overlap");
  if (embeddings) header.emplace_back("cosine min (mean)");
  header.emplace_back("status");
  std::vector<std::string> align(header.size() - 1, "---:");
  align.insert(align.begin(), "---");  // Method: text, left
  align.back() = "---";                // status: text, left
  write_row(out, header);
  write_row(out, align);
  std::set<std::string> memory_methods;
  for (const auto& v : r.variants) {
    std::vector<std::string> row = {cell(v.name),
                                    fixed(v.tokens_per_s.geomean, 0),
                                    share_cell(v.padding_efficiency),
                                    fixed(v.mean_batch_size, 1),
                                    fixed(v.latency_ms.p50, 2),
                                    fixed(v.latency_ms.p99, 2)};
    if (cache) row.push_back(share_cell(v.cache_hit_rate));
    if (allocations) row.push_back(fixed(v.allocations_per_batch, 2));
    for (auto&& c : {rounds_cell(v), human_bytes(v.peak_memory_bytes), gflops_cell(v), scientific(v.check.rel_l2)})
      row.push_back(c);
    row.push_back(top1_cell(v.check));
    if (topk) row.push_back(topk_cell(v.check));
    if (embeddings) row.push_back(cosine_cell(v.check));
    row.push_back(status_text(v.status, v.check));
    write_row(out, row);
    if (!v.peak_memory_method.empty()) memory_methods.insert(v.peak_memory_method);
  }
  if (std::any_of(r.variants.begin(), r.variants.end(),
                  [](const variant_result& v) { return has_prediction_count(v.check); })) {
    // The run's check basis says what a prediction is and the rule (a decoder's: its tokens); files
    // written before it was recorded get the encoder's.
    const std::string& predictions =
        r.check.predictions.empty() ? prediction_text(embeddings ? output_kind::embedding : output_kind::logits)
                                    : r.check.predictions;
    const std::string& rule = r.check.rule.empty() ? std::string(top1_rule_text) : r.check.rule;
    out << "\nPredictions kept: samples whose prediction (" << predictions << ") is the baseline's, over all samples; "
        << rule << ".\n";
  }
  if (!memory_methods.empty()) {
    out << "\nPeak memory: ";
    for (auto it = memory_methods.begin(); it != memory_methods.end(); ++it)
      out << (it == memory_methods.begin() ? "" : "; ") << *it;
    out << ".\n";
  }
}

// A decoder's served generation (runner/generate_server.hpp): TTFT and ITL beside end-to-end latency.
void write_generation_points(const std::vector<server_point>& points, std::ostream& out) {
  write_row(out, {"offered rate (req/s)", "achieved (req/s)", "output tokens/s", "TTFT p50 (ms)", "TTFT p99 (ms)",
                  "ITL p50 (ms)", "ITL p99 (ms)", "end-to-end p50 (ms)", "end-to-end p99 (ms)", "sequences per step",
                  "within bound"});
  write_row(out, {"---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"});
  for (const auto& p : points)
    write_row(out, {std::isnan(p.offered_rate) ? "trace" : fixed(p.offered_rate, 2), fixed(p.achieved_rate, 2),
                    fixed(p.output_tokens_per_s, 1), fixed(p.ttft_p50_ms, 1), fixed(p.ttft_p99_ms, 1),
                    fixed(p.itl_p50_ms, 2), fixed(p.itl_p99_ms, 2), fixed(p.p50_ms, 1), fixed(p.p99_ms, 1),
                    fixed(p.mean_batch_size, 2), p.within_bound ? "yes" : "no"});
}

// The server scenario's rate sweep, one table per variant that has one.
void write_server_tables(const run_result& r, std::ostream& out) {
  out << "\n## Server scenario\n\n";
  const bool generation = std::any_of(r.variants.begin(), r.variants.end(), [](const variant_result& v) {
    return !v.server.empty() && v.server.front().generation();
  });
  if (generation)
    out << "Requests arrive at each offered rate and the variant's batching decodes them (continuous: a request "
           "joins at any decode step; static: a batch runs to its end). TTFT is first token − arrival, queueing "
           "included; ITL the gaps between a request's tokens; end-to-end last token − arrival.";
  else
    out << "Requests arrive at each offered rate and a batcher groups them; latency is completion − arrival, "
           "per request.";
  if (std::isfinite(r.latency_bound_ms))
    out << fmt::format(
        " The bound is {}p99 ≤ {} ms; the max sustainable rate is the highest offered rate that met it.",
        generation ? "TTFT " : "", fixed(r.latency_bound_ms, 1));
  out << '\n';
  for (const auto& v : r.variants) {
    if (v.server.empty()) continue;
    out << "\n### " << v.name << "\n\n";
    out << "Max sustainable rate: "
        << (std::isfinite(v.max_sustainable_rate) ? fixed(v.max_sustainable_rate, 1) + " requests/s"
                                                  : std::string("none of the offered rates met the bound"))
        << ".\n\n";
    if (v.server.front().generation()) {
      write_generation_points(v.server, out);
      continue;
    }
    write_row(out, {"offered rate (req/s)", "achieved (req/s)", "p50 (ms)", "p90 (ms)", "p99 (ms)",
                    "p99.9 (ms)", "mean batch", "within bound"});
    write_row(out, {"---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"});
    for (const auto& p : v.server)
      write_row(out, {std::isnan(p.offered_rate) ? "trace" : fixed(p.offered_rate, 1),
                      fixed(p.achieved_rate, 1), fixed(p.p50_ms, 2), fixed(p.p90_ms, 2), fixed(p.p99_ms, 2),
                      fixed(p.p999_ms, 2), fixed(p.mean_batch_size, 1), p.within_bound ? "yes" : "no"});
  }
}

void write_offload(const offload_info& o, std::ostream& out) {
  const double saved = 1.0 - static_cast<double>(o.resident_weight_bytes) / static_cast<double>(o.full_weight_bytes);
  out << fmt::format("  - offload to `{}`: {} layers, host copies {}{}, prefetch {}; at most {} of {} layers "
                     "resident (bound {}); device-resident weights {} instead of {} ({} less)\n",
                     o.target, o.layers, o.host_dtype, o.pinned ? " (pinned)" : "", o.prefetch,
                     o.max_resident_layers, o.layers, o.resident_bound, human_bytes(o.resident_weight_bytes),
                     human_bytes(o.full_weight_bytes), fixed(saved * percent, 0) + "%");
  const std::string moved =
      o.d2h_bytes_per_pass > 0
          ? fmt::format("{} host → device (forward and backward) + {} of gradients device → host",
                        human_bytes(o.bytes_per_pass - o.d2h_bytes_per_pass), human_bytes(o.d2h_bytes_per_pass))
          : human_bytes(o.bytes_per_pass) + " host → device";
  out << fmt::format("  - per pass: {} in {} ms ({} GB/s host → device); {} ms of it exposed, {} hidden under "
                     "compute\n",
                     moved, fixed(o.copy_ms_per_pass, 2), fixed(o.h2d_gb_per_s, 2), fixed(o.exposed_ms_per_pass, 2),
                     std::isfinite(o.hidden_share) ? fixed(o.hidden_share * percent, 0) + "%" : not_available);
  if (!o.optimizer.empty()) out << "  - optimizer: " << o.optimizer << "\n";
}

void write_parallel(const parallel_info& p, std::ostream& out) {
  out << fmt::format("  - data parallel, {} {}{}: batches dealt out by FLOPs; slowest worker / mean {}\n",
                     p.world_size, p.mode == "processes" ? "ranks" : "worker threads",
                     p.backend.empty() ? "" : fmt::format(" ({})", p.backend), fixed(p.imbalance, 3));
  for (std::size_t i = 0; i < p.workers.size(); ++i) {
    const parallel_worker& w = p.workers[i];
    out << fmt::format(
        "    - {} {}: `{}`{}{}, {} samples ({} tokens) in {} batches, {} s compute per pass (median of "
        "the timed passes), {} samples/s{}\n",
        p.mode == "processes" ? "rank" : "worker", i, w.device, w.host.empty() ? "" : " on " + w.host,
        w.threads > 0 ? fmt::format(", {} thread{}", w.threads, w.threads == 1 ? "" : "s") : "", w.samples,
        w.real_tokens, w.batches, fixed(w.median_s, 3), fixed(w.samples_per_s, 2),
        w.peak_memory_bytes >= 0 ? ", peak memory " + human_bytes(w.peak_memory_bytes) : "");
  }
}

// One line: the stages (device, layers, parameters, busy time) and the measured bubble.
void write_pipeline(const pipeline_info& p, std::ostream& out) {
  std::vector<std::string> stages;
  for (size_t k = 0; k < p.stages.size(); ++k) {
    const pipeline_stage_info& s = p.stages[k];
    stages.push_back(fmt::format("{} `{}` layers {}-{}{}, {} parameters{}, busy {} ms", k, s.device, s.layer_begin,
                                 s.layer_end - 1,
                                 k == 0 && k + 1 == p.stages.size() ? " + embeddings + head"
                                 : k == 0                           ? " + embeddings"
                                 : k + 1 == p.stages.size()         ? " + head"
                                                                    : "",
                                 s.parameters, s.shares_weights ? "" : " (copied)", fixed(s.busy_ms_per_pass, 2)));
  }
  out << fmt::format("  - pipeline: {} stages, micro-batches of {} ({} per pass), {} thread{} per stage; stages {}; "
                     "per pass {} ms, bubble {} (1 − mean stage busy / pass)\n",
                     p.stages.size(), p.micro_batch, fixed(p.micro_batches_per_pass, 0), p.threads_per_stage,
                     p.threads_per_stage == 1 ? "" : "s", fmt::join(stages, "; "), fixed(p.pass_ms, 2),
                     std::isfinite(p.bubble_fraction) ? fixed(p.bubble_fraction * percent, 0) + "%" : not_available);
}

// The train scenario: what each variant's steps did against the baseline, and its memory split.
void write_train_table(const run_result& r, std::ostream& out) {
  out << "\n## Training\n\n";
  out << "Each pass is one forward + backward + AdamW step per batch, every variant from the same initial "
         "weights and optimizer state. Losses, the last step's gradients and the updated weights are "
         "compared with the baseline's (relative L2). Activation peak: the highest allocation level during "
         "a step's forward + backward above the level when its forward started (weights, gradients and "
         "optimizer state excluded).\n\n";
  write_row(out, {"Method", "checkpointing", "steps", "final loss", "loss rel. err", "grad rel. L2",
                  "weight rel. L2", "activation peak", "weights", "gradients", "optimizer state", "status"});
  write_row(out,
            {"---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"});
  for (const auto& v : r.variants) {
    if (!v.train) continue;
    const train_result& t = *v.train;
    write_row(out,
              {cell(v.name), cell(t.checkpointing), std::to_string(t.steps),
               fixed(t.losses.empty() ? not_a_number : t.losses.back(), 6), scientific(t.loss_rel_err),
               scientific(t.grad_rel_l2), scientific(t.weight_rel_l2), human_bytes(t.activation_peak_bytes),
               human_bytes(t.weight_bytes), human_bytes(t.gradient_bytes),
               human_bytes(t.optimizer_state_bytes), to_string(v.status)});
  }
}

// What each variant's techniques measured about their own work (report/metric.hpp), whatever the
// technique: one row per metric.
void write_metrics_table(const run_result& r, std::ostream& out) {
  out << "\n## Technique metrics\n\n";
  write_row(out, {"Method", "metric", "value", "better", "what it is"});
  write_row(out, {"---", "---", "---:", "---", "---"});
  for (const auto& v : r.variants)
    for (const auto& m : v.metrics) {
      const std::string what = m.note.empty() ? m.description : m.description + " (" + m.note + ")";
      write_row(out, {cell(v.name), "`" + m.name + "`", metric_value_text(m), metric_direction_text(m.direction),
                      cell(what)});
    }
}

void write_variant_list(const run_result& r, std::ostream& out) {
  for (const auto& v : r.variants) {
    out << "- **" << v.name << "**" << (v.is_baseline ? " (baseline)" : "");
    if (!v.description.empty()) out << ": " << v.description;
    if (v.status != status_kind::pass)
      out << " — " << to_string(v.status) << (v.reason.empty() ? "" : ": " + v.reason);
    for (const auto& note : v.notes) out << " (note: " << note << ")";
    out << '\n';
    if (v.offload.used) write_offload(v.offload, out);
    if (v.parallel.used) write_parallel(v.parallel, out);
    if (v.pipeline.used) write_pipeline(v.pipeline, out);
  }
}

}  // namespace

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string markdown_server_tables(const run_result& r) {
  std::ostringstream out;
  if (std::any_of(r.variants.begin(), r.variants.end(), [](const variant_result& v) { return !v.server.empty(); }))
    write_server_tables(r, out);
  return out.str();
}

std::string markdown_throughput_cell(const summary& s) { return throughput_cell(s); }
std::string markdown_speedup_cell(const variant_result& v) { return speedup_cell(v); }
std::string markdown_environment(const run_result& r) {
  std::ostringstream out;
  write_environment(r, out);
  return out.str();
}

std::string markdown_table(const run_result& r) {
  fmt::memory_buffer buf;
  auto row = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
    fmt::format_to(std::back_inserter(buf), "| {} | {} | {} | {} |\n", a, b, c, d);
  };
  row("Method", "Throughput (samples/s)", "Speedup vs baseline", "Output check");
  row("---", "---:", "---:", "---");
  for (const auto& v : r.variants) {
    if (v.status == status_kind::skipped)
      row(cell(v.name), em_dash, fmt::format("{} (skipped: {})", em_dash, cell(or_unknown(v.reason))), em_dash);
    else if (hit_limit(v.status))  // not measured: a resource limit, said in the row
      row(method_cell(v), em_dash, fmt::format("{} ({}: {})", em_dash, to_string(v.status), cell(or_unknown(v.reason))),
          em_dash);
    else
      row(method_cell(v), throughput_cell(v.throughput), speedup_cell(v), verdict_cell(v));
  }
  return fmt::to_string(buf);
}

void markdown_writer::do_write(const run_result& r, std::ostream& out) const {
  out << "# " << r.name << "\n\n";
  if (!r.complete)
    out << "> **Incomplete run: " << r.incomplete_reason
        << ".** The figures below are what was measured before it stopped; a variant with fewer timed rounds "
           "than the others says so in its row.\n\n";
  write_environment(r, out);
  out << '\n' << markdown_table(r) << '\n';
  if (!chart_file_.empty()) out << "![Throughput and speedup per variant](" << chart_file_ << ")\n\n";
  write_detail_table(r, out);
  const bool server = std::any_of(r.variants.begin(), r.variants.end(),
                                  [](const variant_result& v) { return !v.server.empty(); });
  if (server) write_server_tables(r, out);
  if (std::any_of(r.variants.begin(), r.variants.end(),
                  [](const variant_result& v) { return v.train.has_value(); }))
    write_train_table(r, out);
  if (std::any_of(r.variants.begin(), r.variants.end(), [](const variant_result& v) { return !v.metrics.empty(); }))
    write_metrics_table(r, out);
  out << "\n## Variants\n\n";
  write_variant_list(r, out);
}

}  // namespace attnbench
