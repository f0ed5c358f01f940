// The generate scenario end to end on the tiny decoders: every variant decodes the same prompts,
// is checked by its tokens and teacher-forced logits, reports its prefill/decode metrics, and a
// technique the scenario does not run is SKIPPED with its reason, never timed as something else.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "config/config_parser.hpp"
#include "report/markdown_writer.hpp"
#include "report/metric.hpp"
#include "report/result_json.hpp"
#include "report/sweep_writers.hpp"
#include "runner/generate_scenario.hpp"
#include "techniques/decoder_offload.hpp"
#include "runner/runner.hpp"
#include "runner/sweep_runner.hpp"
#include "test_support.hpp"

using namespace attnbench;
using nlohmann::ordered_json;

namespace {

ordered_json generate_doc(const std::string& preset) {
  ordered_json doc = ordered_json::parse(R"({
    "name": "generate-test",
    "scenario": "generate",
    "model": {"seed": 2},
    "workload": {"samples": 5, "lengths": {"kind": "uniform", "min": 6, "max": 10}, "max_length": 10, "seed": 1},
    "generate": {"max_new_tokens": 5},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "baseline", "attention": "sdpa"},
      {"name": "naive", "attention": "naive"},
      {"name": "bf16", "precision": "bf16"},
      {"name": "int8", "precision": "int8"},
      {"name": "int8-weight", "precision": "int8-weight-only"},
      {"name": "batch-3", "batching": {"batch_size": 3}},
      {"name": "offloaded", "offload": {"prefetch": 1, "target": "cpu"}}
    ],
    "baseline": "baseline",
    "output": {"dir": "unused"}
  })");
  doc["model"]["preset"] = preset;
  return doc;
}

double metric_of(const variant_result& v, const std::string& name) {
  const metric* m = find_metric(v.metrics, name);
  INFO(v.name << ": metric " << name);
  REQUIRE(m != nullptr);
  return m->value;
}

}  // namespace

TEST_CASE("generate scenario: decoders decode, are checked by tokens, and skip what they do not run",
          "[runner][decoder]") {
  const std::string preset = GENERATE(std::string("gpt2-tiny"), std::string("llama-tiny"));
  INFO(preset);
  const config cfg = attnbench::testing::parse_owned(generate_doc(preset).dump(), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const auto outcome = run_experiment(cfg, opts);
  const run_result& r = outcome.result;
  CHECK(r.scenario == "generate");
  // --save-outputs' tensors: each checked variant's generated token ids, (samples, new tokens).
  REQUIRE(outcome.outputs.count("baseline") == 1);
  CHECK(outcome.outputs.at("baseline").sizes() == torch::IntArrayRef({5, 5}));
  CHECK(torch::equal(outcome.outputs.at("naive"), outcome.outputs.at("baseline")));  // fp32: the same tokens
  CHECK(r.model.family == (preset == "gpt2-tiny" ? "gpt2" : "llama"));
  CHECK(r.model.kv_heads == (preset == "gpt2-tiny" ? 4 : 2));
  REQUIRE(r.variants.size() == 7);
  for (std::size_t i = 0; i + 1 < r.variants.size(); ++i) {
    const variant_result& v = r.variants[i];
    INFO(v.name << ": " << v.reason);
    if (v.name == "int8" && v.status == status_kind::skipped) continue;  // no oneDNN int8 on this CPU
    // fp32 variants decode exactly the baseline's tokens. bf16 and int8 on a random-weight model's flat
    // logits may leave them: then the variant PASSes only if the float64 study excused every changed
    // decision (runner/generation_study.hpp), and its excused sequences are counted.
    const bool fp32 = v.name != "bf16" && v.name != "int8" && v.name != "int8-weight";
    const double identical = metric_of(v, "sequences_identical");
    const double changed = metric_of(v, "changed_decisions");
    INFO("check: " << v.check.message << "; " << changed << " changed decisions");
    CHECK(v.check.samples == 5);
    CHECK(v.check.predictions_kept == identical);
    if (fp32) CHECK(identical == 5);
    CHECK(changed >= 5 - identical);  // every diverging sequence's first step is a decision
    const bool excused = changed == 0 || metric_of(v, "changed_decisions_excused") == changed;
    CHECK(v.status == (excused && v.check.rel_l2 <= v.check.tolerance ? status_kind::pass : status_kind::fail));
    if (changed > 0) {
      CHECK(v.check.study_runs == 8);
      CHECK(v.check.study_class == (fp32 ? "fp32" : v.name == "int8-weight" ? "int8-weight-only" : v.name));
      if (!excused) CHECK_THAT(v.check.message, Catch::Contains("beyond the float64 study's noise"));
      if (excused) CHECK(v.check.exempt_flips == 5 - identical);
    } else {
      CHECK(find_metric(v.metrics, "changed_decisions_excused") == nullptr);
    }
    if (identical < 5) CHECK(metric_of(v, "first_divergence_step") >= 0);
    CHECK(v.throughput.samples.size() == 2);
    for (const char* name : {"prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms",
                             "inter_token_latency_p50_ms", "decode_read_gb_per_s", "prefill_gflops"})
      CHECK(metric_of(v, name) > 0);
    CHECK(metric_of(v, "inter_token_latency_p99_ms") >= metric_of(v, "inter_token_latency_p50_ms"));
    CHECK(metric_of(v, "kv_cache_bytes") > 0);
    // No ceilings measured in this test: the share is n/a, and says why.
    CHECK(std::isnan(metric_of(v, "prefill_ceiling_share")));
    CHECK(find_metric(v.metrics, "prefill_ceiling_share")->note.find("n/a") != std::string::npos);
  }
  CHECK(r.variants[0].check.rel_l2 == 0);
  CHECK(r.variants[1].check.rel_l2 < 1e-5);  // naive against SDPA, fp32
  // int8 weights alone move the logits by the weight error (about 1e-2 a product), far less than
  // int8 activations add; a decode step reads a quarter of the block linears' bytes.
  const variant_result& w8 = r.variants[4];
  CHECK(w8.status != status_kind::skipped);
  CHECK(w8.check.rel_l2 > 0);
  CHECK(w8.check.rel_l2 < 5e-2);
  CHECK(w8.description.find("int8 weights") != std::string::npos);
  CHECK(r.variants[5].check.rel_l2 < 1e-5);  // batched against one at a time, fp32
  // Batches of 3 and 2 consecutive prompts of 6-10 tokens, left-padded to their longest: the
  // padding is computed, reported, and changes no token.
  CHECK(r.variants[5].mean_batch_size == 2.5);
  CHECK(r.variants[5].padding_efficiency < 1.0);
  CHECK(r.variants[5].padding_efficiency ==
        static_cast<double>(r.variants[5].real_tokens) / static_cast<double>(r.variants[5].computed_tokens));
  CHECK(r.variants[5].batching.find("left-padded to the batch's longest") != std::string::npos);
  CHECK(r.variants[0].padding_efficiency == 1.0);
  // bf16 halves the cache of the fp32 baseline at the same shape
  CHECK(metric_of(r.variants[2], "kv_cache_bytes") == metric_of(r.variants[0], "kv_cache_bytes") / 2);
  // The weights as stored: fp32, four bytes a parameter; the bf16 copy two; int8 linears one byte a
  // weight plus a scale per row, the rest fp32.
  CHECK(metric_of(r.variants[0], "weight_bytes") == 4.0 * static_cast<double>(r.model.parameters));
  CHECK(metric_of(r.variants[2], "weight_bytes") == 2.0 * static_cast<double>(r.model.parameters));
  CHECK(metric_of(w8, "weight_bytes") < 0.75 * metric_of(r.variants[0], "weight_bytes"));
  CHECK(metric_of(w8, "weight_bytes") > 0.25 * metric_of(r.variants[0], "weight_bytes"));
  // Offloaded blocks (target cpu): streamed into prefetch + 1 slots in every forward, the same
  // tokens and logits as the resident model, the copies counted.
  const variant_result& off = r.variants[6];
  INFO(off.reason);
  CHECK(off.status == status_kind::pass);
  CHECK(torch::equal(outcome.outputs.at("offloaded"), outcome.outputs.at("baseline")));
  CHECK(off.check.rel_l2 < 1e-6);
  REQUIRE(off.offload.used);
  CHECK(off.offload.target == "cpu");
  CHECK(off.offload.layers == 2);
  CHECK(off.offload.resident_bound == 2);
  CHECK(off.offload.max_resident_layers <= off.offload.resident_bound);
  CHECK(off.offload.resident_weight_bytes <= off.offload.full_weight_bytes);  // 2 slots for 2 blocks: equal
  // Every block copied once per forward: 5 prompts one at a time, a prefill and 4 decode steps each,
  // 25 forwards a pass; the blocks are most of the tiny llama's weights, not all (the embeddings
  // and LM head stay resident).
  CHECK(off.offload.bytes_per_pass % 25 == 0);
  CHECK(off.offload.bytes_per_pass / 25 > off.offload.full_weight_bytes * 4 / 10);
  CHECK(off.offload.bytes_per_pass / 25 < off.offload.full_weight_bytes);
  CHECK(off.offload.copy_ms_per_pass > 0);
  // Timed passes' copies only: never more than the slowest timed pass took in all.
  REQUIRE_FALSE(off.throughput.samples.empty());
  const double slowest = *std::min_element(off.throughput.samples.begin(), off.throughput.samples.end());
  CHECK(off.offload.copy_ms_per_pass <= 5.0 / slowest * 1e3);
  CHECK(off.offload.hidden_share == 0);  // synchronous on the CPU: every copy exposed
  CHECK(metric_of(off, "decode_tokens_per_s") > 0);

  // The decoder's identity survives results.json.
  const run_result back = run_result_from_json(run_result_to_json(r));
  CHECK(back.model.family == r.model.family);
  CHECK(back.model.kv_heads == r.model.kv_heads);
  CHECK(back.scenario == "generate");
}

TEST_CASE("generate scenario: offloading a decoder is SKIPPED where it cannot stream, with the reason",
          "[runner][decoder]") {
  offload_config to_gpu;  // no target: the run's accelerator
  CHECK(decoder_offload_skip_reason(to_gpu, torch::kCPU, "fp32")->find("needs an accelerator") != std::string::npos);
  CHECK(decoder_offload_skip_reason(to_gpu, torch::Device(torch::kCUDA), "fp32")->find("not built yet") !=
        std::string::npos);
  offload_config on_cpu;
  on_cpu.target = "cpu";
  CHECK_FALSE(decoder_offload_skip_reason(on_cpu, torch::kCPU, "fp32"));
  CHECK_FALSE(decoder_offload_skip_reason(on_cpu, torch::kCPU, "bf16"));
  CHECK(decoder_offload_skip_reason(on_cpu, torch::kCPU, "int8-weight-only")->find("packed int8") != std::string::npos);
  offload_config compute = on_cpu;
  compute.host_in_compute_dtype = true;
  CHECK(decoder_offload_skip_reason(compute, torch::kCPU, "fp32")->find("host_dtype") != std::string::npos);
}

TEST_CASE("generate scenario: llama-bench's pp and tg tests as a sweep, each row checked", "[runner][decoder][sweep]") {
  ordered_json doc = generate_doc("llama-tiny");
  doc["variants"] = ordered_json::parse(R"([{"name": "baseline"}, {"name": "naive", "attention": "naive"}])");
  doc["sweep"] = ordered_json::parse(R"({"axes": {"test": ["pp12", "tg6"]}})");
  const config base = attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
  const auto points = expand_sweep(*base.sweep);
  const auto configs = attnbench::testing::sweep_points_owned(base, points, testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const sweep_result s = run_sweep(base, points, configs, opts, nullptr).result;
  REQUIRE(s.points.size() == 2);
  CHECK(s.all_passed());
  // pp12: twelve prompt tokens a sample, one token generated, no decode step to time.
  const variant_result& pp = s.points[0].result.variants[0];
  CHECK(s.points[0].result.workload.max_length == 12);
  CHECK(metric_of(pp, "prefill_tokens_per_s") > 0);
  CHECK(std::isnan(metric_of(pp, "decode_tokens_per_s")));
  // tg6: six decode steps after the prefill's token, checked token by token against the baseline.
  const variant_result& tg = s.points[1].result.variants[1];
  CHECK(metric_of(tg, "decode_tokens_per_s") > 0);
  CHECK(metric_of(tg, "sequences_identical") == 5);
  // A decoder's default batch is one prompt (llama-bench's): 5 prompts x 6 steps x 2 passes.
  CHECK(find_metric(tg.metrics, "inter_token_latency_p50_ms")->note == "60 steps");
  const std::string table = llama_bench_table(s);
  INFO(table);
  CHECK(std::count(table.begin(), table.end(), '\n') == 2 + 4);
  CHECK(table.find("| llama-tiny | ") != std::string::npos);
  CHECK(table.find(" | CPU | 1 | naive | tg6 | ") != std::string::npos);
  CHECK(table.find("| PASS (baseline) |") != std::string::npos);
}

TEST_CASE("generate scenario: continuous batching offline, and generation served at offered rates",
          "[runner][decoder][server]") {
  ordered_json doc = ordered_json::parse(R"({
    "name": "generate-server-test",
    "scenario": "server",
    "server": {"rates": [4, 1000000], "requests": 6, "max_time_s": 5, "latency_bound_ms": 2000, "seed": 3},
    "model": {"preset": "llama-tiny", "seed": 2},
    "workload": {"samples": 5, "lengths": {"kind": "uniform", "min": 4, "max": 12}, "max_length": 12, "seed": 1},
    "generate": {"max_new_tokens": 4},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "baseline"},
      {"name": "continuous", "batching": {"kind": "dynamic", "max_batch_size": 3, "max_tokens": 48}},
      {"name": "static-2", "batching": {"batch_size": 2}}
    ],
    "baseline": "baseline",
    "output": {"dir": "unused"}
  })");
  const config cfg = attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const run_result r = run_experiment(cfg, opts).result;
  REQUIRE(r.variants.size() == 3);
  for (const variant_result& v : r.variants) {
    INFO(v.name << ": " << v.reason);
    // Offline: every prompt's tokens equal the baseline's, whoever it stepped with.
    CHECK(metric_of(v, "sequences_identical") == 5);
    CHECK(v.status == status_kind::pass);
    // Served: one point per rate, each with TTFT and ITL, every request checked.
    REQUIRE(v.server.size() == 2);
    for (const server_point& p : v.server) {
      CHECK(p.generation());
      CHECK(p.requests == 6);
      CHECK(p.ttft_p50_ms > 0);
      CHECK(p.ttft_p99_ms >= p.ttft_p50_ms);
      CHECK(p.itl_p50_ms > 0);
      CHECK(p.p99_ms >= p.ttft_p99_ms);  // end-to-end holds the first token and the rest
      CHECK(p.output_tokens_per_s > 0);
      CHECK(p.mean_batch_size >= 1);
    }
    CHECK(std::any_of(v.notes.begin(), v.notes.end(), [](const std::string& n) {
      return n.find("12 of 12 served requests generated the baseline's tokens") != std::string::npos;
    }));
  }
  // Continuous batching decoded several sequences per step offline, at most its slots.
  const variant_result& c = r.variants[1];
  CHECK(metric_of(c, "decode_rows_per_step") > 1);
  CHECK(metric_of(c, "decode_rows_per_step") <= 3);
  CHECK(metric_of(c, "kv_cache_fill") > 0);
  CHECK(metric_of(c, "kv_cache_fill") <= 1);
  CHECK(c.batching.find("continuous") == 0);
  // At 10^6 req/s the 6 requests arrive within microseconds, long before the first prefill ends
  // (at 400 req/s a quiet machine could finish one before the next arrived): later steps hold
  // more than one sequence.
  CHECK(c.server[1].mean_batch_size > 1);
  CHECK(r.variants[0].server[1].mean_batch_size == 1);  // batch_size 1: one at a time

  // The points survive results.json; the report names TTFT and ITL.
  const run_result back = run_result_from_json(run_result_to_json(r));
  CHECK(back.variants[1].server[0].ttft_p99_ms == c.server[0].ttft_p99_ms);
  CHECK(back.variants[1].server[1].itl_p50_ms == c.server[1].itl_p50_ms);
  const std::string md = markdown_server_tables(r);
  CHECK(md.find("TTFT p99 (ms)") != std::string::npos);
  CHECK(md.find("The bound is TTFT p99") != std::string::npos);
}

TEST_CASE("generate scenario: cpu-flash attends against the KV cache and decodes the baseline's tokens",
          "[runner][decoder][kernels]") {
  // The custom kernel in every way the scenario steps a decoder: one prompt at a time, left-padded
  // static batches (pad keys skipped per row), continuous batching (a cache per row), and under
  // bf16; a kernel without a KV-cache entry point (cuda-flash2, on a GPU) is SKIPPED with its reason.
  ordered_json doc = generate_doc("llama-tiny");
  doc["variants"] = ordered_json::parse(R"([
    {"name": "baseline", "attention": "sdpa"},
    {"name": "cpu-flash", "attention": "cpu-flash"},
    {"name": "cpu-flash-batch-3", "attention": "custom", "batching": {"batch_size": 3}},
    {"name": "cpu-flash-continuous", "attention": "custom",
     "batching": {"kind": "dynamic", "max_batch_size": 3, "max_tokens": 48}},
    {"name": "cpu-flash-bf16", "attention": "custom", "precision": "bf16"}
  ])");
  const config cfg = attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const auto outcome = run_experiment(cfg, opts);
  const run_result& r = outcome.result;
  REQUIRE(r.variants.size() == 5);
  for (std::size_t i = 1; i < 4; ++i) {
    const variant_result& v = r.variants[i];
    INFO(v.name << ": " << v.reason);
    CHECK(v.status == status_kind::pass);
    CHECK(metric_of(v, "sequences_identical") == 5);
    CHECK(torch::equal(outcome.outputs.at(v.name), outcome.outputs.at("baseline")));
    CHECK(v.check.rel_l2 < 1e-5);  // fp32 cpu-flash against SDPA, teacher-forced
    const bool noted = std::any_of(v.notes.begin(), v.notes.end(), [](const std::string& n) {
      return n.find("cpu-flash against the KV cache") != std::string::npos;
    });
    CHECK(noted);
  }
  CHECK(r.variants[2].padding_efficiency < 1.0);  // the left-padded batches really were padded
  const variant_result& bf16 = r.variants[4];
  INFO(bf16.reason);
  CHECK(bf16.status != status_kind::skipped);
  CHECK(bf16.check.rel_l2 < 5e-2);
  variant_config cuda;
  cuda.attention = attention_kind::custom;
  cuda.kernel = "cuda-flash2";
  const auto why = decoder_skip_reason(cuda, variant_plan{}, torch::Device(torch::kCUDA));
  REQUIRE(why);
  CHECK(why->find("cuda-flash2") != std::string::npos);
  CHECK(why->find("reads a KV cache") != std::string::npos);
  variant_config cpu_flash;
  cpu_flash.attention = attention_kind::custom;
  CHECK_FALSE(decoder_skip_reason(cpu_flash, variant_plan{}, torch::kCPU));  // the CPU's default kernel runs
}

TEST_CASE("generate scenario: amp with offloaded blocks decodes what amp decodes resident", "[runner][decoder]") {
  // One slot for two blocks: the slot is refilled within every forward, so a low-precision copy
  // autocast kept of it would run block 0's weights as block 1's.
  ordered_json doc = generate_doc("llama-tiny");
  doc["variants"] = ordered_json::parse(R"([
    {"name": "amp", "precision": "amp"},
    {"name": "amp-offload", "precision": "amp", "offload": {"prefetch": 0, "target": "cpu"}}
  ])");
  doc["baseline"] = "amp";
  const config cfg = attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const auto outcome = run_experiment(cfg, opts);
  const run_result& r = outcome.result;
  REQUIRE(r.variants.size() == 2);
  const variant_result& off = r.variants[1];
  INFO(off.reason);
  CHECK(off.status == status_kind::pass);
  CHECK(off.offload.resident_bound == 1);
  CHECK(off.offload.max_resident_layers == 1);
  CHECK(torch::equal(outcome.outputs.at("amp-offload"), outcome.outputs.at("amp")));
  CHECK(off.check.rel_l2 == 0);
  CHECK(off.offload.host_dtype == "fp32");  // the host blocks stay fp32; autocast casts each slot per call
}

TEST_CASE("generate scenario: data parallel over CPU workers generates every sequence the baseline's",
          "[runner][decoder][parallel]") {
  ordered_json doc = generate_doc("llama-tiny");
  doc["variants"] = ordered_json::parse(R"([
    {"name": "baseline"},
    {"name": "dp-2", "parallel": {"devices": ["cpu", "cpu"], "threads_per_worker": 1}},
    {"name": "dp-2-batched", "batching": {"batch_size": 2}, "parallel": {"devices": ["cpu", "cpu"]}},
    {"name": "dp-continuous", "batching": {"kind": "dynamic", "max_batch_size": 2, "max_tokens": 30},
     "parallel": {"devices": ["cpu", "cpu"]}}
  ])");
  const config cfg = attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const auto outcome = run_experiment(cfg, opts);
  // The run's own count (config "threads": 1): the workers' counts stay on their threads.
  CHECK(at::get_num_threads() == 1);
  const run_result& r = outcome.result;
  REQUIRE(r.variants.size() == 4);
  CHECK_FALSE(r.variants[0].parallel.used);
  for (const char* name : {"dp-2", "dp-2-batched"}) {
    INFO(name);
    const variant_result& v = *std::find_if(r.variants.begin(), r.variants.end(),
                                            [&](const variant_result& x) { return x.name == name; });
    INFO(v.reason);
    // fp32 on other threads, in other batches: the same greedy tokens, every sequence.
    CHECK(v.status == status_kind::pass);
    CHECK(metric_of(v, "sequences_identical") == 5);
    REQUIRE(outcome.outputs.count(name) == 1);
    CHECK(torch::equal(outcome.outputs.at(name), outcome.outputs.at("baseline")));
    // The workers, named in the result and the report.
    REQUIRE(v.parallel.used);
    CHECK(v.parallel.mode == "threads");
    CHECK(v.parallel.world_size == 2);
    REQUIRE(v.parallel.workers.size() == 2);
    const parallel_worker& w0 = v.parallel.workers[0];
    const parallel_worker& w1 = v.parallel.workers[1];
    CHECK(w0.device == "cpu");
    CHECK(w0.threads == 1);  // threads_per_worker, or the run's 1 thread over 2 workers, at least 1
    CHECK(w1.threads == 1);
    CHECK(w0.samples + w1.samples == 5);
    CHECK(w0.samples >= 1);
    CHECK(w1.samples >= 1);
    CHECK(w0.median_s > 0);
    CHECK(v.parallel.imbalance >= 1.0);
    // Prompt and generated tokens of every sequence, each counted once.
    CHECK(w0.real_tokens + w1.real_tokens == v.real_tokens);
    CHECK(v.batching.find("data parallel over 2 worker threads (cpu, cpu) × 1 thread") != std::string::npos);
    // Every generated token over the whole pass's wall time: 5 new tokens a sequence, so 5x the
    // sequences/s of each pass.
    const double generated = metric_of(v, "generated_tokens_per_s");
    CHECK(generated == Approx(5.0 * v.throughput.geomean).epsilon(1e-9));
    CHECK(metric_of(v, "first_token_after_start_ms") > 0);
    CHECK(metric_of(v, "inter_token_latency_p50_ms") > 0);
    CHECK(metric_of(v, "time_to_first_token_ms") > 0);
    // The phases overlap across workers: no prefill or decode rate, and the note says why.
    for (const char* na : {"prefill_tokens_per_s", "decode_tokens_per_s", "prefill_gflops", "decode_read_gb_per_s"}) {
      INFO(na);
      CHECK(std::isnan(metric_of(v, na)));
      CHECK(find_metric(v.metrics, na)->note.find("n/a: data parallel") != std::string::npos);
    }
    std::ostringstream md;
    markdown_writer{}.write(r, md);
    CHECK(md.str().find("data parallel, 2 worker threads") != std::string::npos);
  }
  const variant_result& batched = r.variants[2];
  CHECK(batched.parallel.workers[0].batches + batched.parallel.workers[1].batches == 3);  // batches of 2, 2, 1
  // The report names each worker: its device, its threads, its share.
  std::ostringstream md;
  markdown_writer{}.write(r, md);
  INFO(md.str());
  CHECK(md.str().find("worker 0: `cpu`, 1 thread, ") != std::string::npos);
  CHECK(md.str().find("worker 1: `cpu`, 1 thread, ") != std::string::npos);
  // Not run yet: each worker on its own continuous-batching engine.
  const variant_result& continuous = r.variants[3];
  CHECK(continuous.status == status_kind::skipped);
  CHECK(continuous.reason.find("data parallel with continuous batching is not run yet") != std::string::npos);
  CHECK(outcome.outputs.count("dp-continuous") == 0);
}

TEST_CASE("generate scenario: a bad parallel block is refused with its path", "[runner][decoder][parallel][config]") {
  const auto with_parallel = [](const ordered_json& block, const std::string& scenario = "generate") {
    ordered_json doc = generate_doc("llama-tiny");
    doc["scenario"] = scenario;
    if (scenario == "server")
      doc["server"] = ordered_json::parse(R"({"rates": [4], "requests": 2, "max_time_s": 5, "latency_bound_ms": 2000})");
    doc["variants"] = ordered_json::array({{{"name", "baseline"}}, {{"name", "dp"}, {"parallel", block}}});
    return doc;
  };
  CHECK_THAT(testing::problem_at(with_parallel({{"devices", {"cpu", "tpu"}}}), "variants[1].parallel.devices[1]"),
             Catch::Contains("expected \"cpu\", \"cuda\" or \"cuda:N\""));
  CHECK_THAT(testing::problem_at(with_parallel({{"threads_per_worker", 1}}), "variants[1].parallel.devices"),
             Catch::Contains("required"));
  CHECK_THAT(testing::problem_at(with_parallel({{"devices", {"cpu"}}, {"threads_per_worker", 0}}),
                                 "variants[1].parallel.threads_per_worker"),
             Catch::Contains(">= 1"));
  CHECK_THAT(testing::problem_at(with_parallel({{"mode", "processes"}}), "variants[1].parallel.mode"),
             Catch::Contains("the generate scenario runs data parallel over worker threads"));
  CHECK_THAT(testing::problem_at(with_parallel({{"devices", {"cpu", "cpu"}}}, "server"), "variants[1].parallel"),
             Catch::Contains("parallel variants run in the offline and generate scenarios; this config's scenario is "
                             "\"server\""));
  // A good block parses.
  CHECK(testing::problems_of(with_parallel({{"devices", {"cpu", "cpu"}}, {"threads_per_worker", 1}})).empty());
}
