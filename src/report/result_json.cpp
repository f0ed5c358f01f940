#include "report/result_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "report/json_reader.hpp"
#include "report/sweep_result_json.hpp"
#include "stats/summary.hpp"

namespace attnbench {
namespace {

using ojson = nlohmann::ordered_json;

constexpr int64_t memory_not_measured = -1;  // result.hpp's sentinel for peak_memory_bytes

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }
ojson bytes_or_null(int64_t bytes) { return bytes == memory_not_measured ? ojson(nullptr) : ojson(bytes); }

ojson to_json(const summary& s) {
  ojson samples = ojson::array();
  for (double v : s.samples) samples.push_back(number(v));
  return {{"n", s.n},
          {"geomean", number(s.geomean)},
          {"geomean_ci_low", number(s.geomean_ci_low)},
          {"geomean_ci_high", number(s.geomean_ci_high)},
          {"median", number(s.median)},
          {"mean", number(s.mean)},
          {"min", number(s.min)},
          {"max", number(s.max)},
          {"stddev", number(s.stddev)},
          {"samples", samples}};
}

ojson to_json(const speedup_summary& s) {
  return {{"geomean", number(s.geomean)},
          {"geomean_ci_low", number(s.geomean_ci_low)},
          {"geomean_ci_high", number(s.geomean_ci_high)},
          {"method", s.method == speedup_method::none ? ojson(nullptr) : ojson(to_string(s.method))}};
}

ojson to_json(const check_result& c) {
  const bool compared = c.status != status_kind::skipped;
  const bool counted = compared && c.samples > 0;
  return {{"status", to_string(c.status)},
          {"message", c.message},
          {"output", compared ? ojson(to_string(c.output)) : ojson(nullptr)},
          {"tolerance", number(c.tolerance)},
          {"max_abs", number(c.max_abs)},
          {"rel_l2", number(c.rel_l2)},
          {"cosine", number(c.cosine)},
          {"cosine_min", number(c.cosine_min)},
          {"cosine_mean", number(c.cosine_mean)},
          {"cosine_min_bound", number(c.cosine_min_bound)},
          {"top1_agreement", number(c.top1_agreement)},
          {"top1_agreement_decisive", number(c.top1_agreement_decisive)},
          {"decisive_samples", counted ? ojson(c.decisive_samples) : ojson(nullptr)},
          {"decisive_margin", number(c.decisive_margin)},
          {"samples", counted ? ojson(c.samples) : ojson(nullptr)},
          {"predictions_kept", counted ? ojson(c.predictions_kept) : ojson(nullptr)},
          {"exempt_flips", counted ? ojson(c.exempt_flips) : ojson(nullptr)},
          {"topk", counted ? ojson(c.topk) : ojson(nullptr)},
          {"topk_overlap", number(c.topk_overlap)},
          {"study_class", c.study_class},
          {"study_runs", c.study_runs},
          {"study_note", c.study_note},
          {"random_weights", c.random_weights},
          {"nonfinite", c.nonfinite}};
}

ojson to_json(const server_point& p) {
  return {{"offered_rate", number(p.offered_rate)},
          {"achieved_rate", number(p.achieved_rate)},
          {"requests", p.requests},
          {"p50_ms", number(p.p50_ms)},
          {"p90_ms", number(p.p90_ms)},
          {"p99_ms", number(p.p99_ms)},
          {"p999_ms", number(p.p999_ms)},
          {"mean_batch_size", number(p.mean_batch_size)},
          {"within_bound", p.within_bound}};
}

ojson to_json_of(const server_point& p) {
  ojson j = to_json(p);
  if (p.generation()) {
    j["ttft_p50_ms"] = number(p.ttft_p50_ms);
    j["ttft_p99_ms"] = number(p.ttft_p99_ms);
    j["itl_p50_ms"] = number(p.itl_p50_ms);
    j["itl_p99_ms"] = number(p.itl_p99_ms);
    j["output_tokens_per_s"] = number(p.output_tokens_per_s);
  }
  return j;
}

ojson to_json(const parallel_info& p) {
  ojson workers = ojson::array();
  for (const auto& w : p.workers)
    workers.push_back({{"device", w.device},
                       {"host", w.host},
                       {"threads", w.threads},
                       {"samples", w.samples},
                       {"real_tokens", w.real_tokens},
                       {"batches", w.batches},
                       {"median_s", number(w.median_s)},
                       {"samples_per_s", number(w.samples_per_s)},
                       {"peak_memory_bytes", bytes_or_null(w.peak_memory_bytes)}});
  return {{"mode", p.mode},
          {"world_size", p.world_size},
          {"backend", p.backend},
          {"imbalance", number(p.imbalance)},
          {"workers", workers}};
}

ojson to_json(const offload_info& o) {
  if (!o.used) return nullptr;
  return {{"target", o.target},
          {"host_dtype", o.host_dtype},
          {"pinned", o.pinned},
          {"layers", o.layers},
          {"prefetch", o.prefetch},
          {"resident_bound", o.resident_bound},
          {"max_resident_layers", o.max_resident_layers},
          {"full_weight_bytes", o.full_weight_bytes},
          {"resident_weight_bytes", o.resident_weight_bytes},
          {"bytes_per_pass", o.bytes_per_pass},
          {"d2h_bytes_per_pass", o.d2h_bytes_per_pass},
          {"optimizer", o.optimizer.empty() ? ojson(nullptr) : ojson(o.optimizer)},
          {"copy_ms_per_pass", number(o.copy_ms_per_pass)},
          {"exposed_ms_per_pass", number(o.exposed_ms_per_pass)},
          {"hidden_share", number(o.hidden_share)},
          {"h2d_gb_per_s", number(o.h2d_gb_per_s)}};
}

ojson to_json(const pipeline_info& p) {
  ojson stages = ojson::array();
  for (const auto& s : p.stages)
    stages.push_back({{"device", s.device},
                      {"layer_begin", s.layer_begin},
                      {"layer_end", s.layer_end},
                      {"parameters", s.parameters},
                      {"layer_parameters", s.layer_parameters},
                      {"shares_weights", s.shares_weights},
                      {"busy_ms_per_pass", number(s.busy_ms_per_pass)}});
  return {{"micro_batch", p.micro_batch},
          {"micro_batches_per_pass", number(p.micro_batches_per_pass)},
          {"threads_per_stage", p.threads_per_stage},
          {"stages", stages},
          {"pass_ms", number(p.pass_ms)},
          {"bubble_fraction", number(p.bubble_fraction)}};
}

ojson to_json(const train_result& t) {
  ojson losses = ojson::array();
  for (double l : t.losses) losses.push_back(number(l));
  return {{"checkpointing", t.checkpointing},
          {"steps", t.steps},
          {"dropout", t.dropout},
          {"losses", losses},
          {"loss_rel_err", number(t.loss_rel_err)},
          {"grad_rel_l2", number(t.grad_rel_l2)},
          {"weight_rel_l2", number(t.weight_rel_l2)},
          {"weight_bytes", bytes_or_null(t.weight_bytes)},
          {"gradient_bytes", bytes_or_null(t.gradient_bytes)},
          {"optimizer_state_bytes", bytes_or_null(t.optimizer_state_bytes)},
          {"activation_peak_bytes", bytes_or_null(t.activation_peak_bytes)}};
}

ojson to_json(const variant_result& v) {
  ojson server = ojson::array();
  for (const auto& p : v.server) server.push_back(to_json_of(p));
  ojson j = {{"name", v.name},
          {"description", v.description},
          {"is_baseline", v.is_baseline},
          {"status", to_string(v.status)},
          {"reason", v.reason},
          {"precision", v.precision},
          {"compute_dtype", v.compute_dtype},
          {"attention", v.attention},
          {"sdpa_backend", v.sdpa_backend},
          {"sdpa_backend_used", v.sdpa_backend_used},
          {"batching", v.batching},
          {"batches", v.batches},
          {"real_tokens", v.real_tokens},
          {"computed_tokens", v.computed_tokens},
          {"padding_efficiency", number(v.padding_efficiency)},
          {"mean_batch_size", number(v.mean_batch_size)},
          {"allocations_per_batch", number(v.allocations_per_batch)},
          {"cache_hit_rate", number(v.cache_hit_rate)},
          {"throughput", to_json(v.throughput)},
          {"tokens_per_s", to_json(v.tokens_per_s)},
          {"speedup", to_json(v.speedup)},
          {"latency_ms",
           {{"p50", number(v.latency_ms.p50)},
            {"p90", number(v.latency_ms.p90)},
            {"p99", number(v.latency_ms.p99)}}},
          {"server", server},
          {"max_sustainable_rate", number(v.max_sustainable_rate)},
          {"peak_memory_bytes",
           v.peak_memory_bytes == memory_not_measured ? ojson(nullptr) : ojson(v.peak_memory_bytes)},
          {"peak_memory_method", v.peak_memory_method},
          {"flops_per_pass", number(v.flops_per_pass)},
          {"achieved_gflops", number(v.achieved_gflops)},
          {"ceiling_share", number(v.ceiling_share)},
          {"check", to_json(v.check)}};
  // Later additions, written only when they say something (older readers and files stay valid).
  if (!v.notes.empty()) j["notes"] = v.notes;
  if (v.train) j["train"] = to_json(*v.train);
  if (v.offload.used) j["offload"] = to_json(v.offload);
  if (v.parallel.used) j["parallel"] = to_json(v.parallel);
  if (v.pipeline.used) j["pipeline"] = to_json(v.pipeline);
  if (!v.metrics.empty()) {
    ojson metrics = ojson::array();
    for (const auto& m : v.metrics) {
      ojson one = {{"name", m.name},
                   {"value", number(m.value)},
                   {"unit", m.unit},
                   {"direction", to_string(m.direction)},
                   {"source", m.source},
                   {"description", m.description}};
      if (!m.note.empty()) one["note"] = m.note;
      metrics.push_back(std::move(one));
    }
    j["metrics"] = std::move(metrics);
  }
  if (v.repetition.rounds > 0)
    j["repetition"] = {{"rounds", v.repetition.rounds},
                       {"throughput_rel_half_width", number(v.repetition.throughput_rel_half_width)},
                       {"speedup_rel_half_width", number(v.repetition.speedup_rel_half_width)},
                       {"target_met", v.repetition.target_met},
                       {"noisy", v.repetition.noisy}};
  return j;
}

ojson to_json(const environment_info& e) {
  ojson ceilings = ojson::array();
  for (const auto& c : e.ceilings)
    ceilings.push_back({{"dtype", c.dtype},
                        {"size", c.size},
                        {"gflops", number(c.gflops)},
                        {"sizes", c.sizes},
                        {"repeats", c.repeats},
                        {"measure_s", number(c.measure_s)},
                        {"shapes", c.shapes},
                        {"shape", c.shape},
                        {"spread", number(c.spread)}});
  return {{"harness_version", e.harness_version},
          {"git_commit", e.git_commit},
          {"torch_version", e.torch_version},
          {"cuda_version", e.cuda_version},
          {"device", e.device},
          {"device_name", e.device_name},
          {"cpu_model", e.cpu_model},
          {"cpu_id", e.cpu_id},
          {"cpu_features", e.cpu_features},
          {"cpu_count", e.cpu_count},
          {"cpu_caches", e.cpu_caches},
          {"gpu_capability", e.gpu_capability},
          {"gpu_driver", e.gpu_driver},
          {"gpu_tensor_core_dtypes", e.gpu_tensor_core_dtypes},
          {"threads", e.threads},
          {"hostname", e.hostname},
          {"date", e.date},
          {"config_path", e.config_path},
          {"config_hash", e.config_hash},
          {"ceilings", ceilings},
          {"config", e.config}};
}

using reader = json_reader;

status_kind status_from(const reader& r, const std::string& key) {
  const std::string s = r.string(key);
  for (auto k : {status_kind::pass, status_kind::fail, status_kind::skipped, status_kind::oom, status_kind::timeout})
    if (to_string(k) == s) return k;
  throw input_error(r.path_of(key), fmt::format("unknown status '{}'; expected PASS, FAIL, SKIPPED, OOM or TIMEOUT", s));
}

std::vector<double> finite(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

// Version 1 wrote the median and the mean's t interval (ci_low, ci_high); version 2 the geometric
// mean and its interval. A version-1 summary keeps its descriptive fields and gets the geometric
// mean and interval from its samples (every version-1 file has them); its mean interval is
// dropped, as nothing reports it any more.
summary summary_from(const reader& r, int64_t version) {
  summary s;
  s.n = r.integer("n");
  s.median = r.number("median");
  s.mean = r.number("mean");
  s.min = r.number("min");
  s.max = r.number("max");
  s.stddev = r.number("stddev");
  const ojson& samples = r.array("samples");
  for (size_t i = 0; i < samples.size(); ++i)
    s.samples.push_back(reader::as_number(samples[i], fmt::format("{}[{}]", r.path_of("samples"), i)));
  if (version == 1) {
    const geomean_interval g = geomean_ci(finite(s.samples));
    s.geomean = g.centre;
    s.geomean_ci_low = g.low;
    s.geomean_ci_high = g.high;
  } else {
    s.geomean = r.number("geomean");
    s.geomean_ci_low = r.number("geomean_ci_low");
    s.geomean_ci_high = r.number("geomean_ci_high");
  }
  return s;
}

speedup_summary speedup_from(const reader& r) {
  speedup_summary s;
  s.geomean = r.number("geomean");
  s.geomean_ci_low = r.number("geomean_ci_low");
  s.geomean_ci_high = r.number("geomean_ci_high");
  if (!r.at("method").is_null()) {
    const std::string m = r.string("method");
    if (m == to_string(speedup_method::paired))
      s.method = speedup_method::paired;
    else if (m == to_string(speedup_method::welch))
      s.method = speedup_method::welch;
    else
      throw input_error(r.path_of("method"),
                        fmt::format("unknown method '{}'; expected paired, welch or null", m));
  }
  return s;
}

// Version 1 had no "output" (its runs were logits, or embeddings judged by argmax) and no
// per-sample cosines: read as logits with the cosines undefined.
check_result check_from(const reader& r) {
  check_result c;
  c.status = status_from(r, "status");
  c.message = r.string("message");
  if (r.has("output") && !r.at("output").is_null()) {
    const std::string kind = r.string("output");
    if (kind == to_string(output_kind::embedding))
      c.output = output_kind::embedding;
    else if (kind != to_string(output_kind::logits))
      throw input_error(r.path_of("output"),
                        fmt::format("unknown output '{}'; expected logits or embedding", kind));
  }
  c.tolerance = r.number("tolerance");
  c.max_abs = r.number("max_abs");
  c.rel_l2 = r.number("rel_l2");
  c.cosine = r.number("cosine");
  c.cosine_min = r.optional_number("cosine_min");
  c.cosine_mean = r.optional_number("cosine_mean");
  c.cosine_min_bound = r.optional_number("cosine_min_bound");
  c.top1_agreement = r.number("top1_agreement");
  c.top1_agreement_decisive = r.number("top1_agreement_decisive");
  c.decisive_samples = r.at("decisive_samples").is_null() ? 0 : r.integer("decisive_samples");
  c.decisive_margin = r.number("decisive_margin");
  // Absent before predictions were counted (results of older runs): 0 of 0, shown as n/a.
  const auto count = [&](const char* key) {
    return r.has(key) && !r.at(key).is_null() ? r.integer(key) : int64_t{0};
  };
  c.samples = count("samples");
  c.predictions_kept = count("predictions_kept");
  c.exempt_flips = count("exempt_flips");
  // Absent before issue 37 (results of older runs): no top-k, no study, weights unknown.
  c.topk = count("topk");
  c.topk_overlap = r.has("topk_overlap") ? r.optional_number("topk_overlap") : not_a_number;
  c.study_class = r.has("study_class") ? r.string("study_class") : "";
  c.study_runs = count("study_runs");
  c.study_note = r.has("study_note") ? r.string("study_note") : "";
  c.random_weights = r.has("random_weights") && r.at("random_weights").is_boolean() && r.at("random_weights").get<bool>();
  c.nonfinite = r.integer("nonfinite");
  return c;
}

server_point server_point_from(const reader& r) {
  server_point p;
  p.offered_rate = r.number("offered_rate");
  p.achieved_rate = r.number("achieved_rate");
  p.requests = r.integer("requests");
  p.p50_ms = r.number("p50_ms");
  p.p90_ms = r.number("p90_ms");
  p.p99_ms = r.number("p99_ms");
  p.p999_ms = r.number("p999_ms");
  p.mean_batch_size = r.number("mean_batch_size");
  p.within_bound = r.boolean("within_bound");
  if (r.has("ttft_p50_ms")) {
    p.ttft_p50_ms = r.number("ttft_p50_ms");
    p.ttft_p99_ms = r.number("ttft_p99_ms");
    p.itl_p50_ms = r.number("itl_p50_ms");
    p.itl_p99_ms = r.number("itl_p99_ms");
    p.output_tokens_per_s = r.number("output_tokens_per_s");
  }
  return p;
}

offload_info offload_from(const reader& r) {
  offload_info o;
  o.used = true;
  o.target = r.string("target");
  o.host_dtype = r.string("host_dtype");
  o.pinned = r.boolean("pinned");
  o.layers = r.integer("layers");
  o.prefetch = r.integer("prefetch");
  o.resident_bound = r.integer("resident_bound");
  o.max_resident_layers = r.integer("max_resident_layers");
  o.full_weight_bytes = r.integer("full_weight_bytes");
  o.resident_weight_bytes = r.integer("resident_weight_bytes");
  o.bytes_per_pass = r.integer("bytes_per_pass");
  // Absent in results written before offloaded training existed: inference, nothing copied back.
  if (r.has("d2h_bytes_per_pass")) o.d2h_bytes_per_pass = r.integer("d2h_bytes_per_pass");
  if (r.has("optimizer") && !r.at("optimizer").is_null()) o.optimizer = r.string("optimizer");
  o.copy_ms_per_pass = r.number("copy_ms_per_pass");
  o.exposed_ms_per_pass = r.number("exposed_ms_per_pass");
  o.hidden_share = r.number("hidden_share");
  o.h2d_gb_per_s = r.number("h2d_gb_per_s");
  return o;
}

int64_t bytes_from(const reader& r, const std::string& key) {
  return r.at(key).is_null() ? memory_not_measured : r.integer(key);
}

parallel_info parallel_from(const reader& r) {
  parallel_info p;
  p.used = true;
  p.mode = r.string("mode");
  p.world_size = r.integer("world_size");
  p.backend = r.string("backend");
  p.imbalance = r.number("imbalance");
  const ojson& workers = r.array("workers");
  for (size_t i = 0; i < workers.size(); ++i) {
    const reader w(workers[i], fmt::format("{}[{}]", r.path_of("workers"), i));
    p.workers.push_back(parallel_worker{
        w.string("device"), w.string("host"), w.integer("threads"), w.integer("samples"),
        w.integer("real_tokens"), w.integer("batches"), w.number("median_s"), w.number("samples_per_s"),
        w.has("peak_memory_bytes") ? bytes_from(w, "peak_memory_bytes") : -1});
  }
  return p;
}

pipeline_info pipeline_from(const reader& r) {
  pipeline_info p;
  p.used = true;
  p.micro_batch = r.integer("micro_batch");
  p.micro_batches_per_pass = r.number("micro_batches_per_pass");
  p.threads_per_stage = r.integer("threads_per_stage");
  const ojson& stages = r.array("stages");
  for (size_t i = 0; i < stages.size(); ++i) {
    const reader s(stages[i], fmt::format("{}[{}]", r.path_of("stages"), i));
    p.stages.push_back({s.string("device"), s.integer("layer_begin"), s.integer("layer_end"), s.integer("parameters"),
                        s.integer("layer_parameters"), s.boolean("shares_weights"), s.number("busy_ms_per_pass")});
  }
  p.pass_ms = r.number("pass_ms");
  p.bubble_fraction = r.number("bubble_fraction");
  return p;
}

train_result train_from(const reader& r) {
  train_result t;
  t.checkpointing = r.string("checkpointing");
  t.steps = r.integer("steps");
  t.dropout = r.number("dropout");
  const ojson& losses = r.array("losses");
  for (size_t i = 0; i < losses.size(); ++i)
    t.losses.push_back(reader::as_number(losses[i], fmt::format("{}[{}]", r.path_of("losses"), i)));
  t.loss_rel_err = r.number("loss_rel_err");
  t.grad_rel_l2 = r.number("grad_rel_l2");
  t.weight_rel_l2 = r.number("weight_rel_l2");
  t.weight_bytes = bytes_from(r, "weight_bytes");
  t.gradient_bytes = bytes_from(r, "gradient_bytes");
  t.optimizer_state_bytes = bytes_from(r, "optimizer_state_bytes");
  t.activation_peak_bytes = bytes_from(r, "activation_peak_bytes");
  return t;
}

metric metric_from(const reader& r) {
  metric m;
  m.name = r.string("name");
  m.value = r.number("value");  // null: not measured
  m.unit = r.string("unit");
  const std::string direction = r.string("direction");
  const auto d = parse_metric_direction(direction);
  if (!d)
    throw input_error(r.path_of("direction"),
                      fmt::format("unknown direction \"{}\"; expected higher, lower or neither", direction));
  m.direction = *d;
  m.source = r.string("source");
  m.description = r.string("description");
  if (r.has("note")) m.note = r.string("note");
  return m;
}

std::vector<std::string> string_list(const reader& r, const std::string& key) {
  std::vector<std::string> out;
  const ojson& items = r.array(key);
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string())
      throw input_error(fmt::format("{}[{}]", r.path_of(key), i), "expected a string");
    out.push_back(items[i].get<std::string>());
  }
  return out;
}

variant_result variant_from(const reader& r, int64_t version) {
  variant_result v;
  v.name = r.string("name");
  v.description = r.string("description");
  v.is_baseline = r.boolean("is_baseline");
  v.status = status_from(r, "status");
  v.reason = r.string("reason");
  v.precision = r.string("precision");
  v.compute_dtype = r.has("compute_dtype") ? r.string("compute_dtype") : compute_dtype_of_label(v.precision);
  v.attention = r.string("attention");
  v.sdpa_backend = r.string("sdpa_backend");
  v.sdpa_backend_used = r.string("sdpa_backend_used");
  v.batching = r.string("batching");
  v.batches = r.integer("batches");
  v.real_tokens = r.integer("real_tokens");
  v.computed_tokens = r.integer("computed_tokens");
  v.padding_efficiency = r.optional_number("padding_efficiency");
  v.mean_batch_size = r.optional_number("mean_batch_size");
  v.allocations_per_batch = r.optional_number("allocations_per_batch");
  v.cache_hit_rate = r.optional_number("cache_hit_rate");
  v.throughput = summary_from(r.object("throughput"), version);
  v.tokens_per_s = summary_from(r.object("tokens_per_s"), version);
  // Version 1's speedup (a ratio of medians with a bootstrap interval) is recomputed from the
  // samples once every variant is read (run_result_from_json).
  if (version != 1) v.speedup = speedup_from(r.object("speedup"));
  const reader latency = r.object("latency_ms");
  v.latency_ms = {latency.number("p50"), latency.number("p90"), latency.number("p99")};
  if (r.has("server")) {
    const ojson& server = r.array("server");
    for (size_t i = 0; i < server.size(); ++i)
      v.server.push_back(server_point_from(reader(server[i], fmt::format("{}[{}]", r.path_of("server"), i))));
  }
  v.max_sustainable_rate = r.optional_number("max_sustainable_rate");
  v.peak_memory_bytes =
      r.at("peak_memory_bytes").is_null() ? memory_not_measured : r.integer("peak_memory_bytes");
  v.peak_memory_method = r.string("peak_memory_method");
  v.flops_per_pass = r.number("flops_per_pass");
  v.achieved_gflops = r.number("achieved_gflops");
  v.ceiling_share = r.number("ceiling_share");
  v.check = check_from(r.object("check"));
  if (r.has("notes")) {
    const ojson& notes = r.array("notes");
    for (size_t i = 0; i < notes.size(); ++i) {
      if (!notes[i].is_string()) throw input_error(fmt::format("{}[{}]", r.path_of("notes"), i), "expected a string");
      v.notes.push_back(notes[i].get<std::string>());
    }
  }
  if (r.has("train")) v.train = train_from(r.object("train"));
  if (r.has("offload") && !r.at("offload").is_null()) v.offload = offload_from(r.object("offload"));
  if (r.has("parallel") && !r.at("parallel").is_null()) v.parallel = parallel_from(r.object("parallel"));
  if (r.has("pipeline") && !r.at("pipeline").is_null()) v.pipeline = pipeline_from(r.object("pipeline"));
  // Version 3 on; absent when no technique reported one.
  if (r.has("metrics")) {
    const ojson& metrics = r.array("metrics");
    for (size_t i = 0; i < metrics.size(); ++i)
      v.metrics.push_back(metric_from(reader(metrics[i], fmt::format("{}[{}]", r.path_of("metrics"), i))));
  }
  if (r.has("repetition") && !r.at("repetition").is_null()) {
    const reader rep = r.object("repetition");
    v.repetition.rounds = rep.integer("rounds");
    v.repetition.throughput_rel_half_width = rep.number("throughput_rel_half_width");
    v.repetition.speedup_rel_half_width = rep.number("speedup_rel_half_width");
    v.repetition.target_met = rep.boolean("target_met");
    v.repetition.noisy = rep.boolean("noisy");
  }
  return v;
}

environment_info environment_from(const reader& r) {
  environment_info e;
  e.harness_version = r.string("harness_version");
  e.git_commit = r.string("git_commit");
  e.torch_version = r.string("torch_version");
  e.cuda_version = r.string("cuda_version");
  e.device = r.string("device");
  e.device_name = r.string("device_name");
  e.cpu_model = r.string("cpu_model");
  if (r.has("cpu_id")) e.cpu_id = r.string("cpu_id");  // version 3 on
  // Each added after version 3 first appeared; files without them read as unknown.
  if (r.has("cpu_features")) e.cpu_features = string_list(r, "cpu_features");
  if (r.has("cpu_count")) e.cpu_count = r.integer("cpu_count");
  if (r.has("cpu_caches")) e.cpu_caches = r.string("cpu_caches");
  if (r.has("gpu_capability")) e.gpu_capability = r.string("gpu_capability");
  if (r.has("gpu_driver")) e.gpu_driver = r.string("gpu_driver");
  if (r.has("gpu_tensor_core_dtypes")) e.gpu_tensor_core_dtypes = string_list(r, "gpu_tensor_core_dtypes");
  e.threads = r.integer("threads");
  e.hostname = r.string("hostname");
  e.date = r.string("date");
  e.config_path = r.string("config_path");
  e.config_hash = r.string("config_hash");
  const ojson& ceilings = r.array("ceilings");
  for (size_t i = 0; i < ceilings.size(); ++i) {
    const reader c(ceilings[i], fmt::format("{}[{}]", r.path_of("ceilings"), i));
    matmul_ceiling m{c.string("dtype"), c.integer("size"), c.number("gflops")};
    // Absent before a ceiling was the best of several sizes: one size, repeats unrecorded.
    if (c.has("sizes") && c.at("sizes").is_array())
      for (const auto& n : c.at("sizes"))
        if (n.is_number_integer()) m.sizes.push_back(n.get<int64_t>());
    if (c.has("repeats") && c.at("repeats").is_number_integer()) m.repeats = static_cast<int>(c.integer("repeats"));
    m.measure_s = c.optional_number("measure_s");
    // Absent before the model's shapes and the spread were measured (issue 37 part 4).
    if (c.has("shapes") && c.at("shapes").is_array())
      for (const auto& n : c.at("shapes"))
        if (n.is_string()) m.shapes.push_back(n.get<std::string>());
    if (c.has("shape")) m.shape = c.string("shape");
    m.spread = c.has("spread") ? c.optional_number("spread") : not_a_number;
    e.ceilings.push_back(std::move(m));
  }
  e.config = r.at("config");
  return e;
}

model_info model_from(const reader& r) {
  model_info m;
  m.preset = r.string("preset");
  m.layers = r.integer("layers");
  m.hidden = r.integer("hidden");
  m.heads = r.integer("heads");
  m.ffn = r.integer("ffn");
  m.vocab_size = r.integer("vocab_size");
  m.max_positions = r.integer("max_positions");
  m.num_labels = r.integer("num_labels");
  m.parameters = r.integer("parameters");
  m.weight_checksum = r.string("weight_checksum");
  m.causal = r.boolean("causal");
  // Files written before decoders have neither: their models were all bert.
  m.family = r.has("family") ? r.string("family") : "bert";
  m.kv_heads = r.has("kv_heads") ? r.integer("kv_heads") : m.heads;
  return m;
}

workload_info workload_from(const reader& r) {
  workload_info w;
  w.samples = r.integer("samples");
  w.max_length = r.integer("max_length");
  w.lengths = r.string("lengths");
  w.real_tokens = r.integer("real_tokens");
  w.min_length = r.integer("min_length");
  w.max_length_seen = r.integer("max_length_seen");
  w.mean_length = r.number("mean_length");
  if (r.has("tokenizer")) {  // absent before tokenizers were recorded
    w.tokenizer = r.string("tokenizer");
    w.tokenizer_fnv1a64 = r.string("tokenizer_fnv1a64");
  }
  return w;
}

// A version-1 file's speedups, as version 2 defines them: from each variant's samples/s per round
// against the baseline's (speedup_of), for every variant that ran while the baseline did.
void recompute_speedups(run_result& r) {
  const auto base = std::find_if(r.variants.begin(), r.variants.end(),
                                 [&](const variant_result& v) { return v.name == r.baseline; });
  if (base == r.variants.end() || base->status == status_kind::skipped) return;
  const std::vector<double> base_samples = finite(base->throughput.samples);
  for (auto& v : r.variants)
    if (v.status != status_kind::skipped) v.speedup = speedup_of(finite(v.throughput.samples), base_samples);
}

ojson to_json(const workload_info& w) {
  ojson j = {{"samples", w.samples},
             {"max_length", w.max_length},
             {"lengths", w.lengths},
             {"real_tokens", w.real_tokens},
             {"min_length", w.min_length},
             {"max_length_seen", w.max_length_seen},
             {"mean_length", number(w.mean_length)}};
  // A later addition, written only for a text workload (older readers and files stay valid): the
  // tokenizer file that made the samples and the FNV-1a 64 of its bytes.
  if (!w.tokenizer.empty()) {
    j["tokenizer"] = w.tokenizer;
    j["tokenizer_fnv1a64"] = w.tokenizer_fnv1a64;
  }
  return j;
}

}  // namespace

ojson run_result_to_json(const run_result& r) {
  const model_info& m = r.model;
  ojson variants = ojson::array();
  for (const auto& v : r.variants) variants.push_back(to_json(v));
  return {{"schema_version", r.schema_version},
          {"name", r.name},
          {"complete", r.complete},
          {"incomplete_reason", r.incomplete_reason},
          {"baseline", r.baseline},
          {"environment", to_json(r.environment)},
          {"model",
           {{"preset", m.preset},
            {"layers", m.layers},
            {"hidden", m.hidden},
            {"heads", m.heads},
            {"ffn", m.ffn},
            {"vocab_size", m.vocab_size},
            {"max_positions", m.max_positions},
            {"num_labels", m.num_labels},
            {"parameters", m.parameters},
            {"weight_checksum", m.weight_checksum},
            {"causal", m.causal},
            {"family", m.family.empty() ? "bert" : m.family},
            {"kv_heads", m.kv_heads > 0 ? m.kv_heads : m.heads}}},  // resolved: a file says what ran
          {"check",
           {{"weights", r.check.weights},
            {"random_weights", r.check.random_weights},
            {"weight_checksum", r.check.weight_checksum},
            {"head", r.check.head},
            {"corpus", r.check.corpus},
            {"predictions", r.check.predictions},
            {"rule", r.check.rule},
            {"study_runs", r.check.study_runs}}},
          {"workload", to_json(r.workload)},
          {"measure",
           {{"warmup", r.warmup},
            {"repetitions", r.repetitions},
            {"mode", r.repetition_mode},
            {"target_rel_half_width", number(r.target_rel_half_width)},
            {"max_time_s", number(r.max_time_s)},
            {"stop_reason", r.stop_reason}}},
          {"scenario", r.scenario},
          {"latency_bound_ms", number(r.latency_bound_ms)},
          {"variants", variants}};
}

run_result run_result_from_json(const ojson& j) {
  const reader top(j, "");
  run_result r;
  const int64_t version = top.integer("schema_version");
  if (version < oldest_results_schema_version || version > results_schema_version)
    throw input_error("schema_version",
                      fmt::format("results schema version {} is not supported (expected {} to {})", version,
                                  oldest_results_schema_version, results_schema_version));
  r.name = top.string("name");
  if (top.has("complete")) {  // absent in files written before interruption was reported: complete
    r.complete = top.boolean("complete");
    r.incomplete_reason = top.string("incomplete_reason");
  }
  r.baseline = top.string("baseline");
  r.environment = environment_from(top.object("environment"));
  r.model = model_from(top.object("model"));
  r.workload = workload_from(top.object("workload"));
  if (top.has("check")) {  // absent before issue 37: what the check ran on was not recorded
    const reader c = top.object("check");
    r.check.weights = c.string("weights");
    r.check.random_weights = c.boolean("random_weights");
    r.check.weight_checksum = c.string("weight_checksum");
    r.check.head = c.string("head");
    r.check.corpus = c.string("corpus");
    r.check.predictions = c.string("predictions");
    r.check.rule = c.string("rule");
    r.check.study_runs = c.integer("study_runs");
  }
  const reader measure = top.object("measure");
  r.warmup = measure.integer("warmup");
  r.repetitions = measure.integer("repetitions");
  if (measure.has("mode")) {  // absent in files written before adaptive repetitions: fixed then
    r.repetition_mode = measure.string("mode");
    r.target_rel_half_width = measure.optional_number("target_rel_half_width");
    r.max_time_s = measure.optional_number("max_time_s");
    r.stop_reason = measure.string("stop_reason");
  }
  if (top.has("scenario")) r.scenario = top.string("scenario");
  r.latency_bound_ms = top.optional_number("latency_bound_ms");
  const ojson& variants = top.array("variants");
  for (size_t i = 0; i < variants.size(); ++i)
    r.variants.push_back(variant_from(reader(variants[i], fmt::format("variants[{}]", i)), version));
  if (version == 1) recompute_speedups(r);
  return r;
}

run_result run_result_from_json(const nlohmann::json& j) { return run_result_from_json(ojson(j)); }

run_result load_run_result(const std::filesystem::path& path) {
  const std::string file = path.string();
  const ojson j = read_json_file(path);
  try {
    return is_sweep_json(j) ? flatten_sweep(sweep_result_from_json(j)) : run_result_from_json(j);
  } catch (const input_error& e) {
    std::vector<problem> problems;
    for (const auto& p : e.problems()) problems.push_back({file, p.to_string()});
    throw input_error(std::move(problems));
  }
}

}  // namespace attnbench
