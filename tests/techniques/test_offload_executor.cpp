// CPU offloading: the mechanism on the CPU (streaming into separate slot buffers), its schedule
// and residency bound, bit-identical outputs, the SKIPPED path without an accelerator, config
// errors; and the CUDA stream path, [gpu], skipped without a GPU.
#include "techniques/offload_executor.hpp"

#include <catch2/catch.hpp>

#include <set>

#include <torch/cuda.h>

#include "common/error.hpp"
#include "config/byte_size.hpp"
#include "config/config_parser.hpp"
#include "plan_support.hpp"
#include "runner/executor_base.hpp"
#include "runner/memory_tracker.hpp"
#include "runner/runner.hpp"
#include "techniques/executor_batch.hpp"
#include "test_support.hpp"

using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

model_config four_layers() {
  auto m = testing::tiny_model();
  m.layers = 4;
  return m;
}

batch random_batch(torch::Device device) { return testing::padded_batch(11, 24, 1, 10, device); }

variant_config offload_variant(int64_t prefetch, const std::string& target) {
  variant_config v;
  v.name = "offload";
  v.attention = attention_kind::sdpa;
  offload_config o;
  o.prefetch = prefetch;
  o.target = target;
  v.offload = o;
  return v;
}

std::vector<std::string> schedule(std::initializer_list<const char*> steps) {
  return {steps.begin(), steps.end()};
}

}  // namespace

TEST_CASE("offload on the CPU: bit-identical outputs, the prefetch schedule, the residency bound",
          "[offload]") {
  torch::InferenceMode inference;
  EncoderClassifier model(four_layers());
  model->init_weights(7);
  model->eval();
  const torch::Device cpu(torch::kCPU);
  const batch b = random_batch(cpu);
  variant_config plain_v = offload_variant(1, "cpu");
  plain_v.offload.reset();
  const torch::Tensor expected = testing::planned_executor(model, cpu, plain_v)->forward(b);

  offload_executor one(model, cpu, offload_variant(1, "cpu"),
                       testing::plan_alone(offload_variant(1, "cpu"), model->config()), false);
  CHECK(torch::equal(one.forward(b), expected));
  CHECK(one.last_schedule() ==
        schedule({"load 0", "load 1", "run 0", "load 2", "run 1", "load 3", "run 2", "run 3"}));
  CHECK(one.resident_bound() == 2);
  CHECK(one.max_resident_layers() == 2);
  CHECK(torch::equal(one.forward(b), expected));  // slots refilled for the next batch

  offload_executor none(model, cpu, offload_variant(0, "cpu"),
                        testing::plan_alone(offload_variant(0, "cpu"), model->config()), false);
  CHECK(torch::equal(none.forward(b), expected));
  CHECK(none.last_schedule() ==
        schedule({"load 0", "run 0", "load 1", "run 1", "load 2", "run 2", "load 3", "run 3"}));
  CHECK(none.max_resident_layers() == 1);

  offload_executor all(model, cpu, offload_variant(4, "cpu"),
                       testing::plan_alone(offload_variant(4, "cpu"), model->config()), false);
  CHECK(torch::equal(all.forward(b), expected));
  CHECK(all.resident_bound() == 4);  // never more slots than layers
  CHECK(all.last_schedule().front() == "load 0");
  CHECK(all.last_schedule()[3] == "load 3");

  variant_result r;
  r.batches = 5;
  one.annotate(r);
  CHECK(r.offload.used);
  CHECK(r.offload.bytes_per_pass == 4 * one.layer_bytes() * 5);
  CHECK(r.offload.max_resident_layers == 2);
  CHECK(r.offload.resident_weight_bytes == r.offload.full_weight_bytes - 2 * one.layer_bytes());
  CHECK(r.offload.hidden_share == 0);  // synchronous copies hide nothing
}

TEST_CASE("offload holds on its device only the resident part and the slots, its host weights are the model's",
          "[offload]") {
  torch::InferenceMode inference;
  EncoderClassifier model(four_layers());
  model->init_weights(7);
  model->eval();
  const torch::Device cpu(torch::kCPU);
  const batch b = random_batch(cpu);
  variant_config plain_v = offload_variant(1, "cpu");
  plain_v.offload.reset();
  const torch::Tensor expected = testing::planned_executor(model, cpu, plain_v)->forward(b);

  std::unique_ptr<offload_executor> ex;
  int64_t built_bytes = 0;
  {
    const peak_memory_scope built(cpu);  // what building the executor allocates, measured
    ex = std::make_unique<offload_executor>(model, cpu, offload_variant(1, "cpu"),
                                            testing::plan_alone(offload_variant(1, "cpu"), model->config()),
                                            false);
    built_bytes = built.current_bytes();
  }
  // The resident part is a model without encoder layers; the host weights are the model's own
  // parameters, not a second host copy.
  CHECK(ex->resident()->num_layers() == 0);
  CHECK(ex->shares_host_weights());
  std::set<const void*> host;
  for (int64_t i = 0; i < 4; ++i) {
    const auto own = model->layer(i)->parameters();
    const auto& weights = ex->host_weights()[static_cast<size_t>(i)];
    REQUIRE(weights.size() == own.size());
    for (size_t k = 0; k < own.size(); ++k) {
      CHECK(weights[k].data_ptr() == own[k].data_ptr());
      host.insert(own[k].data_ptr());
    }
  }
  // No encoder-layer weight is resident outside the slots: nothing on the device side is one of
  // them, and the device side is exactly the resident part plus prefetch + 1 slots.
  int64_t device_bytes = 0, resident_bytes = 0;
  for (const auto& t : ex->device_parameters()) {
    CHECK(host.count(t.data_ptr()) == 0);
    device_bytes += static_cast<int64_t>(t.nbytes());
  }
  for (const auto& t : ex->resident()->parameters()) resident_bytes += static_cast<int64_t>(t.nbytes());
  CHECK(device_bytes == resident_bytes + 2 * ex->layer_bytes());
  variant_result r;
  r.batches = 1;
  CHECK(torch::equal(ex->forward(b), expected));
  ex->annotate(r);
  CHECK(device_bytes == r.offload.resident_weight_bytes);  // the computed bound
  // Measured: building it allocated the bound (and a few small buffers), no copy of the layers:
  // four layers copied would add 4 × layer_bytes.
  CHECK(built_bytes >= device_bytes);
  CHECK(built_bytes < device_bytes + ex->layer_bytes() / 2);
}

TEST_CASE("offload with host copies in the autocast dtype: half the bytes, the same bf16 outputs", "[offload]") {
  torch::InferenceMode inference;
  EncoderClassifier model(four_layers());
  model->init_weights(7);
  model->eval();
  const torch::Device cpu(torch::kCPU);
  const batch b = random_batch(cpu);
  variant_config amp = offload_variant(1, "cpu");
  amp.precision = precision_kind::amp_bf16;
  variant_config plain_v = amp;
  plain_v.offload.reset();
  const torch::Tensor expected = testing::planned_executor(model, cpu, plain_v)->forward(b);
  offload_executor fp32_host(model, cpu, amp, testing::plan_alone(amp, model->config()), false);
  amp.offload->host_in_compute_dtype = true;
  offload_executor bf16_host(model, cpu, amp, testing::plan_alone(amp, model->config()), false);
  // Autocast casts the fp32 weights to bf16 anyway: casting them beforehand changes no value.
  CHECK(torch::equal(bf16_host.forward(b), expected));
  CHECK(torch::equal(fp32_host.forward(b), expected));
  CHECK(bf16_host.layer_bytes() < fp32_host.layer_bytes() * 6 / 10);  // matrices halve; biases, norms stay fp32
  CHECK(fp32_host.shares_host_weights());
  CHECK(!bf16_host.shares_host_weights());  // a copy in the compute dtype
  variant_result r;
  r.batches = 1;
  bf16_host.annotate(r);
  CHECK(r.offload.host_dtype == "bf16 matrices");
}

TEST_CASE("offload in a run: PASS with target cpu, SKIPPED without an accelerator", "[offload][runner]") {
  auto doc = nlohmann::ordered_json::parse(R"({
    "name": "offload-test",
    "model": {"preset": "bert-mini", "seed": 1},
    "workload": {"samples": 10, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 24},
    "measure": {"warmup": 0, "repetitions": 1},
    "device": "cpu",
    "threads": 1,
    "variants": [
      {"name": "base", "batching": {"batch_size": 4}},
      {"name": "mechanism", "batching": {"batch_size": 4}, "offload": {"prefetch": 2, "target": "cpu"}},
      {"name": "gpu-only", "batching": {"batch_size": 4}, "offload": {}},
      {"name": "disabled", "batching": {"batch_size": 4}, "offload": {"enabled": false}}
    ],
    "baseline": "base"
  })");
  const config cfg = attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  const auto& vs = out.result.variants;
  CHECK(vs[1].status == status_kind::pass);
  CHECK(vs[1].check.max_abs == 0);  // fp32, the same kernels on the same weights
  CHECK(vs[1].offload.max_resident_layers == 3);
  CHECK(vs[1].offload.bytes_per_pass > 0);
  CHECK_THAT(vs[1].description, Contains("offloaded"));
  CHECK(vs[2].status == status_kind::skipped);
  CHECK_THAT(vs[2].reason, Contains("needs an accelerator"));
  CHECK(!vs[2].offload.used);
  CHECK(!vs[3].offload.used);  // "enabled": false is the plain path
  CHECK(vs[3].status == status_kind::pass);
  // Device memory with and without offload side by side, both measured: the whole model's weights
  // for the resident variants, the resident part and the slots for the offloaded one.
  const auto metric_of = [](const variant_result& v, const char* name) {
    const metric* m = find_metric(v.metrics, name);
    REQUIRE(m != nullptr);
    return m->value;
  };
  const double whole = metric_of(vs[0], "device_weight_bytes");
  const double offloaded = metric_of(vs[1], "device_weight_bytes");
  const auto full = static_cast<double>(vs[1].offload.full_weight_bytes);
  const auto bound = static_cast<double>(vs[1].offload.resident_weight_bytes);
  CHECK(whole >= full);
  CHECK(whole < full * 1.05);
  CHECK(offloaded >= bound);
  CHECK(offloaded < bound + full / 20);
  CHECK(metric_of(vs[1], "device_peak_bytes") == offloaded + static_cast<double>(vs[1].peak_memory_bytes));
  CHECK(metric_of(vs[0], "device_peak_bytes") > metric_of(vs[1], "device_peak_bytes"));
  CHECK(find_metric(vs[2].metrics, "device_weight_bytes") == nullptr);  // skipped: nothing placed
}

TEST_CASE("bad offload blocks are config errors with their path", "[offload][config]") {
  auto doc = nlohmann::ordered_json::parse(R"({
    "name": "t", "model": {"preset": "bert-tiny"},
    "workload": {"samples": 4, "lengths": {"kind": "fixed", "length": 8}},
    "device": "cpu",
    "variants": [{"name": "a"},
                 {"name": "b", "offload": {"prefetch": -1}},
                 {"name": "c", "offload": {"prefetch": 3}},
                 {"name": "d", "offload": {"target": "cuda:3"}},
                 {"name": "e", "offload": {"target": "tpu", "pinnd": true}}],
    "baseline": "a"
  })");
  try {
    attnbench::testing::parse_owned(doc.dump(), "", testing::cpu_only());
    FAIL("expected an input_error");
  } catch (const input_error& e) {
    const std::string all = e.what();
    CHECK_THAT(all, Contains("variants[1].offload.prefetch: must be >= 0; got -1"));
    CHECK_THAT(all, Contains("variants[2].offload.prefetch: must be <= the model's 2 layers; got 3"));
    CHECK_THAT(
        all,
        Contains("variants[3].offload.target: \"cuda:3\" is not available: this machine has 0 CUDA devices"));
    CHECK_THAT(all,
               Contains("variants[4].offload.target: expected \"cpu\", \"cuda\" or \"cuda:N\"; got \"tpu\""));
    CHECK_THAT(all, Contains("variants[4].offload.pinnd: unknown key; did you mean \"pinned\"?"));
  }
  // The CPU mechanism belongs to CPU runs: on a GPU run it is an error, not a silent CPU detour.
  doc["device"] = "cuda";
  doc["variants"] =
      nlohmann::ordered_json::parse(R"([{"name": "a"}, {"name": "b", "offload": {"target": "cpu"}}])");
  CHECK_THROWS_WITH(attnbench::testing::parse_owned(doc.dump(), "", device_caps{1, true}),
                    Contains("variants[1].offload.target: \"cpu\" exercises the mechanism on a CPU run"));
}

TEST_CASE("offload on CUDA: copy stream, events, bound and outputs", "[offload][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  torch::InferenceMode inference;
  const torch::Device gpu(torch::kCUDA);
  EncoderClassifier model(four_layers());
  model->init_weights(7);
  model->eval();
  model->to(gpu);
  const batch b = random_batch(gpu);
  variant_config plain_v = offload_variant(1, "");
  plain_v.offload.reset();
  const torch::Tensor expected = testing::planned_executor(model, gpu, plain_v)->forward(b).cpu();
  offload_executor ex(model, gpu, offload_variant(1, ""),
                      testing::plan_alone(offload_variant(1, ""), model->config()), false);
  for (int i = 0; i < 3; ++i) CHECK(torch::equal(ex.forward(b).cpu(), expected));
  CHECK(ex.max_resident_layers() == 2);
  variant_result r;
  r.batches = 1;
  ex.annotate(r);
  CHECK(r.offload.pinned);
  CHECK(r.offload.copy_ms_per_pass > 0);
  CHECK(r.offload.h2d_gb_per_s > 0);
  CHECK(r.offload.hidden_share >= 0);
  CHECK(r.offload.hidden_share <= 1);
}

TEST_CASE("offload in a run on CUDA under a memory limit: the resident variant OOM, offload fits, measured",
          "[offload][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  // 8 layers of 50 MB and 128 MB of embeddings: 0.53 GB whole, 0.23 GB offloaded with prefetch 1.
  auto doc = nlohmann::ordered_json::parse(R"({
    "name": "offload-gpu-test",
    "model": {"layers": 8, "hidden": 1024, "heads": 8, "ffn": 4096, "vocab_size": 30522, "max_positions": 512,
              "seed": 1},
    "workload": {"samples": 8, "lengths": {"kind": "uniform", "min": 8, "max": 64}, "max_length": 64},
    "measure": {"warmup": 0, "repetitions": 1},
    "device": "cuda",
    "device_memory_limit": "384MiB",
    "variants": [
      {"name": "offload", "batching": {"batch_size": 4}, "offload": {"prefetch": 1}},
      {"name": "resident", "batching": {"batch_size": 4}},
      {"name": "offload0", "batching": {"batch_size": 4}, "offload": {"prefetch": 0}}
    ],
    "baseline": "offload"
  })");
  const config cfg = attnbench::testing::parse_owned(doc.dump(), "", device_caps{1, true});
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  const auto& vs = out.result.variants;
  CHECK(vs[0].status == status_kind::pass);
  CHECK(vs[1].status == status_kind::skipped);
  CHECK_THAT(vs[1].reason, Contains("OOM"));
  CHECK(vs[2].status == status_kind::pass);
  CHECK(vs[2].check.max_abs == 0);
  const metric* weights = find_metric(vs[0].metrics, "device_weight_bytes");
  REQUIRE(weights != nullptr);
  const auto bound = static_cast<double>(vs[0].offload.resident_weight_bytes);
  CHECK(weights->value >= bound);
  CHECK(weights->value < bound + 1024.0 * 1024);  // the allocator's rounding, no layer more
  CHECK(weights->value < static_cast<double>(device_memory_limit(cfg)));
}
