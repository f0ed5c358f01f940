// A fixed run_result shared by the report tests: a baseline, a faster variant that passes,
// and a variant that was skipped (all its measurements NaN). Its strings exercise CSV
// quoting (commas, a double quote). Changing it changes the golden files.
#pragma once

#include <cmath>
#include <vector>

#include "report/result.hpp"
#include "stats/summary.hpp"

namespace attnbench::testing {

// A passed check of classifier logits over 256 samples: 250 decisive ones, all agreeing.
inline check_result logits_check(double tolerance, double max_abs, double rel_l2, double cosine,
                                 double top1) {
  check_result c;
  c.status = status_kind::pass;
  c.output = output_kind::logits;
  c.tolerance = tolerance;
  c.max_abs = max_abs;
  c.rel_l2 = rel_l2;
  c.cosine = cosine;
  c.top1_agreement = top1;
  c.top1_agreement_decisive = 1.0;
  c.decisive_samples = 250;
  c.decisive_margin = 0.01;
  c.samples = 256;  // 6 coin tosses: a flip among them is excused
  c.predictions_kept = std::llround(top1 * 256);
  c.exempt_flips = c.samples - c.predictions_kept;
  return c;
}

inline run_result sample_result() {
  run_result r;
  r.name = "cpu-small";
  r.baseline = "fp32-naive";
  r.warmup = 2;
  r.repetitions = 5;
  r.repetition_mode = "adaptive";
  r.target_rel_half_width = 0.02;
  r.max_time_s = 60;
  r.stop_reason = "time budget reached";

  environment_info& e = r.environment;
  e.harness_version = "0.1.0";
  e.git_commit = "3f2a9c1";
  e.torch_version = "2.11.0";
  e.device = "cpu";
  e.device_name = "AMD EPYC 7B13";
  e.cpu_model = "AMD EPYC 7B13";
  e.cpu_id = "AuthenticAMD family 25 model 1 stepping 1";  // a Zen 3
  e.cpu_features = {"avx2", "fma", "f16c"};
  e.threads = 16;
  e.hostname = "bench-01";
  e.date = "2025-06-01T12:00:00Z";
  e.config_path = "configs/cpu_small.json";
  e.config_hash = "9b1f0c3e5a7d2468ace13579bdf02468ace13579bdf02468ace13579bdf02468";
  e.ceilings = {{"fp32", 2048, 812.4}, {"bf16", 2048, 1310.7}};
  // Keys deliberately not sorted: the config must come back in the order given.
  e.config = nlohmann::ordered_json::parse(
      R"({"name": "cpu-small", "baseline": "fp32-naive", "model": {"preset": "mini"},
          "variants": [{"name": "fp32-naive"}, {"name": "bf16-sdpa", "precision": "amp-bf16"}]})");

  r.model = {"mini", 4, 256, 4, 1024, 30522, 512, 2, 11170562, "c0ffee12", false};
  r.workload = {256, 256, "lognormal(median=128, sigma=0.6) clipped to [16, 256]", 35112, 16, 256, 137.15625};

  const double tokens_per_sample = 35112.0 / 256;
  const double flops_per_pass = 2.62e11;
  auto measured = [&](variant_result& v, const std::vector<double>& samples_per_s,
                      const std::vector<double>& baseline, double ceiling_gflops) {
    v.throughput = summarize(samples_per_s);
    std::vector<double> tokens;
    for (double s : samples_per_s) tokens.push_back(s * tokens_per_sample);
    v.tokens_per_s = summarize(tokens);
    v.speedup = speedup_of(samples_per_s, baseline);
    v.batches = 32;
    v.real_tokens = 35112;
    v.computed_tokens = 48640;
    v.padding_efficiency = 35112.0 / 48640;
    v.mean_batch_size = 256.0 / 32;
    v.flops_per_pass = flops_per_pass;
    v.achieved_gflops = flops_per_pass * v.throughput.geomean / 256 / 1e9;
    v.ceiling_share = v.achieved_gflops / ceiling_gflops;
  };

  const std::vector<double> baseline_samples = {41.20, 41.85, 40.97, 41.52, 41.33};
  variant_result base;
  base.name = "fp32-naive";
  base.description = "fp32, attention written out as matmul + softmax + matmul";
  base.is_baseline = true;
  base.status = status_kind::pass;
  base.precision = "fp32";
  base.compute_dtype = "fp32";
  base.attention = "naive";
  base.batching = "static bs=8, pad=longest";
  measured(base, baseline_samples, baseline_samples, 812.4);
  base.latency_ms = {193.4, 201.7, 215.2};
  base.peak_memory_bytes = 412345344;
  base.peak_memory_method = "process RSS high-water mark";
  base.check = logits_check(1e-5, 0.0, 0.0, 1.0, 1.0);

  variant_result fast;
  fast.name = "bf16-sdpa";
  fast.description = "bf16 autocast and fused scaled_dot_product_attention";
  fast.status = status_kind::pass;
  fast.precision = "amp-bf16";
  fast.compute_dtype = "bf16";
  fast.attention = "sdpa";
  fast.sdpa_backend = "auto";
  fast.sdpa_backend_used = "flash";
  fast.batching = "static bs=8, pad=longest";
  measured(fast, {97.8, 99.1, 96.5, 98.7, 98.2}, baseline_samples, 1310.7);
  fast.latency_ms = {81.2, 85.9, 92.4};
  fast.peak_memory_bytes = 268959744;
  fast.peak_memory_method = "process RSS high-water mark";
  fast.check = logits_check(2e-2, 0.0123, 3.42e-3, 0.99999, 0.99609375);
  base.repetition = {5, 0.0081, not_a_number, true, false};
  fast.repetition = {5, 0.0113, 0.0241, false, true};  // the speedup missed ±2%: noisy
  // Metrics of a technique the writers know nothing about: one measured, one n/a with its reason.
  fast.metrics = {{"resident_weight_bytes", 22341124, metric_unit::bytes, metric_direction::lower_is_better,
                   "test-technique", "weights held on the device", ""},
                  {"overlap_share", not_a_number, metric_unit::share, metric_direction::higher_is_better,
                   "test-technique", "copy time hidden under compute", "no copy stream on the CPU"}};

  variant_result skipped;
  skipped.name = "fp16-flash";
  skipped.description = "fp16 autocast with the flash SDPA backend";
  skipped.status = status_kind::skipped;
  skipped.reason = R"(flash backend needs a CUDA device, this run is on "cpu")";
  skipped.precision = "amp-fp16";
  skipped.compute_dtype = "fp16";
  skipped.attention = "sdpa";
  skipped.sdpa_backend = "flash";
  skipped.batching = "static bs=8, pad=longest";
  skipped.check.message = "not run";

  r.variants = {base, fast, skipped};
  return r;
}

// `r` with variant `index`'s throughput replaced by `samples` (summary recomputed): the compare
// tests shape distributions with it.
inline run_result with_throughput(run_result r, size_t index, const std::vector<double>& samples) {
  r.variants.at(index).throughput = summarize(samples);
  return r;
}

// `samples` scaled by `factor` (0.8: 20% slower).
inline std::vector<double> scaled(std::vector<double> samples, double factor) {
  for (double& s : samples) s *= factor;
  return samples;
}

// The same run with a mean-pooled embedding model: the checks compare per-sample cosines, and no
// variant has a top-1 figure.
inline run_result embedding_sample_result() {
  run_result r = sample_result();
  r.model.num_labels = 0;
  for (auto& v : r.variants) {
    if (v.status == status_kind::skipped) continue;
    check_result& c = v.check;
    c.output = output_kind::embedding;
    c.top1_agreement = c.top1_agreement_decisive = c.decisive_margin = not_a_number;
    c.decisive_samples = 0;
    c.samples = c.predictions_kept = c.exempt_flips = 0;  // as a file written before neighbours were counted
    c.cosine_min_bound = std::sqrt(1 - 16 * c.tolerance * c.tolerance);
    c.cosine_min = v.is_baseline ? 1.0 : 0.99987;
    c.cosine_mean = v.is_baseline ? 1.0 : 0.999994;
  }
  return r;
}

// The same run in the server scenario: the fast variant has a rate sweep, a result cache and
// pooled input buffers; the baseline has none of them (NaN, empty), as a variant without them.
inline run_result server_sample_result() {
  run_result r = sample_result();
  r.scenario = "server";
  r.latency_bound_ms = 250;
  variant_result& fast = r.variants[1];
  fast.cache_hit_rate = 0.25;
  fast.allocations_per_batch = 0.0;
  fast.server = {
      {50, 49.6, 1000, 60.2, 88.1, 120.5, 180.3, 3.1, true},
      {100, 97.9, 2000, 92.4, 170.2, 231.7, 301.9, 6.4, true},
      {200, 121.3, 2400, 850.5, 1400.2, 1702.8, 1850.1, 8.0, false},
      {not_a_number, 75.0, 500, 70.1, 95.5, 140.0, 160.2, 4.2, true},  // a trace replay
  };
  fast.max_sustainable_rate = 100;
  return r;
}

}  // namespace attnbench::testing
