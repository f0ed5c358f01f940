// Pipeline model parallel: outputs equal to the plain executor's (2 and 3 CPU stages, explicit and
// balanced splits, a micro-batch that does not divide the batch), the balanced split, a stage's
// error surfacing as an exception, per-stage OpenMP thread counts, the report, a whole run; and
// the CUDA path, [gpu], skipped without a GPU.
#include "techniques/pipeline_executor.hpp"

#include <thread>

#include <catch2/catch.hpp>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include "core/sdpa_backend_guard.hpp"
#include "plan_support.hpp"
#include "runner/executor_base.hpp"
#include "runner/runner.hpp"
#include "tensor_support.hpp"
#include "test_support.hpp"

using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

model_config four_layers() {
  auto m = testing::tiny_model();
  m.layers = 4;
  return m;
}

EncoderClassifier make_model(const model_config& m) {
  EncoderClassifier model(m);
  model->init_weights(7);
  model->eval();
  return model;
}

// Seven rows, row 1 and row 5 padded.
batch random_batch(torch::Device device) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  batch b;
  b.input_ids = at::randint(1000, 30000, {7, 24}, gen, torch::kLong);
  b.padding_mask = torch::ones({7, 24}, torch::kBool);
  b.padding_mask.index_put_({1, torch::indexing::Slice(10, 24)}, false);
  b.padding_mask.index_put_({5, torch::indexing::Slice(3, 24)}, false);
  b.real_tokens = b.padding_mask.sum().item<int64_t>();
  b.padded_length = 24;
  for (int64_t i = 0; i < 7; ++i) b.sample_index.push_back(i);
  b.input_ids = b.input_ids.to(device);
  b.padding_mask = b.padding_mask.to(device);
  return b;
}

variant_config pipeline_variant(std::vector<std::string> stages, int64_t micro_batch,
                                std::vector<int64_t> layers = {}, attention_kind attention = attention_kind::sdpa) {
  variant_config v;
  v.name = "pipe";
  v.attention = attention;
  pipeline_config p;
  p.stages = std::move(stages);
  p.micro_batch = micro_batch;
  p.layers = std::move(layers);
  p.threads_per_stage = 1;
  v.pipeline = p;
  return v;
}

torch::Tensor plain_logits(EncoderClassifier model, torch::Device device, variant_config v, const batch& b) {
  v.pipeline.reset();
  return testing::planned_executor(std::move(model), device, v)->forward(b);
}

using testing::rel_l2;

// Restores the caller's intra-op thread count when a test changed it.
struct thread_count_scope {
  int saved = at::get_num_threads();
  ~thread_count_scope() { at::set_num_threads(saved); }
};

}  // namespace

TEST_CASE("balanced split: contiguous, the smallest largest stage, then the most even", "[pipeline]") {
  CHECK(balanced_split({5, 5, 5, 5}, 2) == std::vector<int64_t>{2, 2});
  CHECK(balanced_split({5, 5, 5, 5, 5}, 2) == std::vector<int64_t>{3, 2});  // earlier stages take the extra
  CHECK(balanced_split({5, 5, 5, 5, 5, 5, 5}, 3) == std::vector<int64_t>{3, 2, 2});
  CHECK(balanced_split({5, 5, 5, 5, 5, 5}, 4) == std::vector<int64_t>{2, 2, 1, 1});
  CHECK(balanced_split({5, 1, 1, 1, 1, 1}, 2) == std::vector<int64_t>{1, 5});  // 5 | 5, not 3 layers each
  CHECK(balanced_split({10, 1, 1, 1, 10, 1}, 2) == std::vector<int64_t>{3, 3});  // 12 | 12
  CHECK(balanced_split({4, 4, 1, 1, 1, 1}, 3) == std::vector<int64_t>{1, 1, 4});
  CHECK(balanced_split({7}, 1) == std::vector<int64_t>{1});
  CHECK(balanced_split({3, 3, 3}, 3) == std::vector<int64_t>{1, 1, 1});
  CHECK_THROWS(balanced_split({1, 1}, 3));
}

TEST_CASE("a CPU pipeline gives the plain executor's logits", "[pipeline][techniques]") {
  torch::InferenceMode inference;
  const torch::Device cpu(torch::kCPU);
  EncoderClassifier model = make_model(four_layers());
  const batch b = random_batch(cpu);
  for (auto attention : {attention_kind::sdpa, attention_kind::naive}) {
    const variant_config plain_v = pipeline_variant({"cpu"}, 1, {}, attention);
    const torch::Tensor expected = plain_logits(model, cpu, plain_v, b);
    const struct {
      std::vector<std::string> stages;
      int64_t micro_batch;
      std::vector<int64_t> layers;
      std::vector<std::pair<int64_t, int64_t>> ranges;
    } cases[] = {
        {{"cpu", "cpu"}, 3, {}, {{0, 2}, {2, 4}}},                    // balanced; 7 rows: 3 + 3 + 1
        {{"cpu", "cpu"}, 2, {1, 3}, {{0, 1}, {1, 4}}},                // explicit
        {{"cpu", "cpu", "cpu"}, 2, {}, {{0, 2}, {2, 3}, {3, 4}}},     // balanced: 2 + 1 + 1
        {{"cpu", "cpu", "cpu", "cpu"}, 4, {}, {{0, 1}, {1, 2}, {2, 3}, {3, 4}}},
        {{"cpu", "cpu"}, 7, {3, 1}, {{0, 3}, {3, 4}}},                // one micro-batch: no overlap
        {{"cpu", "cpu"}, 100, {}, {{0, 2}, {2, 4}}},                  // micro_batch above the batch
    };
    for (const auto& c : cases) {
      INFO("stages " << c.stages.size() << ", micro_batch " << c.micro_batch << ", attention "
                     << to_string(attention));
      // The caller's thread count in every stage: GEMMs split their work by thread count, and
      // another split rounds differently (by ~1e-8 here), so only equal counts are bit-identical.
      variant_config v = pipeline_variant(c.stages, c.micro_batch, c.layers, attention);
      v.pipeline->threads_per_stage = at::get_num_threads();
      pipeline_executor pipe(model, cpu, v, testing::plan_alone(v, model->config()), false);
      CHECK(pipe.stage_layers() == c.ranges);
      const torch::Tensor got = pipe.forward(b);
      REQUIRE(got.sizes() == expected.sizes());
      CHECK(rel_l2(got, expected) <= 1e-6);
      CHECK(rel_l2(pipe.forward(b), expected) <= 1e-6);  // the threads serve the next batch too
      // One micro-batch runs the plain executor's GEMM shapes: bit-identical. Smaller ones change
      // the GEMMs' row count, and with it their blocking and rounding (measured: not identical).
      if (c.micro_batch >= b.input_ids.size(0)) CHECK(torch::equal(got, expected));
    }
  }
}

TEST_CASE("a pipeline under autocast gives the plain executor's bf16 logits", "[pipeline][techniques]") {
  torch::InferenceMode inference;
  const torch::Device cpu(torch::kCPU);
  EncoderClassifier model = make_model(four_layers());
  const batch b = random_batch(cpu);
  variant_config v = pipeline_variant({"cpu", "cpu"}, 3);
  v.precision = precision_kind::amp_bf16;
  const torch::Tensor expected = plain_logits(model, cpu, v, b);
  pipeline_executor pipe(model, cpu, v, testing::plan_alone(v, model->config()), false);
  const torch::Tensor got = pipe.forward(b);
  // Autocast is opened inside each stage thread: without it the stages would compute in fp32.
  CHECK(rel_l2(got, expected) <= 1e-6);
  v.precision = precision_kind::fp32;
  CHECK(rel_l2(got, plain_logits(model, cpu, v, b)) > 1e-4);
}

TEST_CASE("an error in a stage surfaces as an exception naming the stage", "[pipeline][techniques]") {
  torch::InferenceMode inference;
  const torch::Device cpu(torch::kCPU);
  EncoderClassifier model = make_model(four_layers());
  const batch b = random_batch(cpu);
  pipeline_executor pipe(model, cpu, pipeline_variant({"cpu", "cpu"}, 2),
                         testing::plan_alone(pipeline_variant({"cpu", "cpu"}, 2), model->config()), false);
  const torch::Tensor expected = pipe.forward(b);
  pipe.inject_fault_for_test(1, 2);
  CHECK_THROWS_WITH(pipe.forward(b), Contains("pipeline stage 1 (cpu, encoder layers 2-3) failed on micro-batch 2: "
                                              "injected test fault"));
  pipe.inject_fault_for_test(0, 0);
  CHECK_THROWS_WITH(pipe.forward(b), Contains("pipeline stage 0 (cpu, encoder layers 0-1) failed on micro-batch 0"));
  // Every micro-batch drained: the pipeline serves the next batch normally.
  pipe.inject_fault_for_test(0, -1);
  pipe.inject_fault_for_test(1, -1);
  CHECK(torch::equal(pipe.forward(b), expected));
  // A shape error from LibTorch itself, in stage 0's embeddings.
  batch bad = b;
  bad.input_ids = b.input_ids.to(torch::kFloat);
  CHECK_THROWS_WITH(pipe.forward(bad), Contains("pipeline stage 0"));
  CHECK(torch::equal(pipe.forward(b), expected));
}

TEST_CASE("each stage thread runs its own OpenMP team, the caller's count is unchanged", "[pipeline][techniques]") {
  REQUIRE(at::get_parallel_info().find("OpenMP") != std::string::npos);
  torch::InferenceMode inference;
  const thread_count_scope restore;
  at::set_num_threads(4);
  const torch::Device cpu(torch::kCPU);
  EncoderClassifier model = make_model(four_layers());
  const batch b = random_batch(cpu);
  {
    variant_config v = pipeline_variant({"cpu", "cpu", "cpu"}, 2);
    v.pipeline->threads_per_stage = 3;
    pipeline_executor pipe(model, cpu, v, testing::plan_alone(v, model->config()), false);
    CHECK(pipe.threads_per_stage() == 3);
    CHECK(pipe.stage_threads() == std::vector<int>{3, 3, 3});
    pipe.forward(b);
    CHECK(at::get_num_threads() == 4);
  }
  {
    variant_config v = pipeline_variant({"cpu", "cpu"}, 2);
    v.pipeline->threads_per_stage = 0;  // default: the caller's 4 over 2 stages
    pipeline_executor pipe(model, cpu, v, testing::plan_alone(v, model->config()), false);
    CHECK(pipe.stage_threads() == std::vector<int>{2, 2});
    CHECK(at::get_num_threads() == 4);
    // A thread started afterwards starts from the caller's count, not a stage's.
    int fresh = 0;
    std::thread([&] { fresh = at::get_num_threads(); }).join();
    CHECK(fresh == 4);
  }
  {
    variant_config v = pipeline_variant({"cpu", "cpu", "cpu"}, 2);
    v.pipeline->threads_per_stage = 0;  // 4 / 3 → 1
    pipeline_executor pipe(model, cpu, v, testing::plan_alone(v, model->config()), false);
    CHECK(pipe.stage_threads() == std::vector<int>{1, 1, 1});
  }
}

TEST_CASE("annotate reports the stages, busy times and the measured bubble", "[pipeline][techniques]") {
  torch::InferenceMode inference;
  const torch::Device cpu(torch::kCPU);
  EncoderClassifier model = make_model(four_layers());
  const batch b = random_batch(cpu);
  pipeline_executor pipe(model, cpu, pipeline_variant({"cpu", "cpu"}, 3, {1, 3}),
                         testing::plan_alone(pipeline_variant({"cpu", "cpu"}, 3, {1, 3}), model->config()),
                         false);
  pipe.begin_phase(pass_phase::timed);
  for (int i = 0; i < 3; ++i) pipe.forward(b);
  variant_result r;
  r.batches = 2;
  pipe.annotate(r);
  const pipeline_info& p = r.pipeline;
  REQUIRE(p.used);
  CHECK(p.micro_batch == 3);
  CHECK(p.micro_batches_per_pass == 6);  // 3 micro-batches per batch, 2 batches per pass
  CHECK(p.threads_per_stage == 1);
  REQUIRE(p.stages.size() == 2);
  const int64_t layer = parameter_count(*model->layer(0));
  CHECK(p.stages[0].layer_begin == 0);
  CHECK(p.stages[0].layer_end == 1);
  CHECK(p.stages[0].layer_parameters == layer);
  CHECK(p.stages[0].parameters == layer + parameter_count(*model->embeddings()));
  CHECK(p.stages[1].layer_parameters == 3 * layer);
  CHECK(p.stages[0].parameters + p.stages[1].parameters == parameter_count(*model));
  CHECK(p.stages[0].shares_weights);
  for (const auto& s : p.stages) {
    CHECK(s.device == "cpu");
    CHECK(s.busy_ms_per_pass > 0);
    CHECK(s.busy_ms_per_pass < p.pass_ms);
  }
  CHECK(p.bubble_fraction > 0);
  CHECK(p.bubble_fraction < 1);
}

TEST_CASE("a pipeline variant in a run: PASS, and its pipeline info in every report", "[pipeline][runner]") {
  auto doc = nlohmann::ordered_json::parse(R"({
    "name": "pipeline-test",
    "model": {"preset": "bert-mini", "seed": 1},
    "workload": {"samples": 10, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 24},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 2,
    "variants": [
      {"name": "base", "batching": {"batch_size": 4}},
      {"name": "pipe", "batching": {"batch_size": 4}, "pipeline": {"stages": ["cpu", "cpu"], "micro_batch": 3}},
      {"name": "pipe3", "batching": {"batch_size": 4},
       "pipeline": {"stages": ["cpu", "cpu", "cpu"], "micro_batch": 1, "layers": [2, 1, 1]}}
    ],
    "baseline": "base"
  })");
  const config cfg = testing::parse(doc);
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  const auto& vs = out.result.variants;
  CHECK(!vs[0].pipeline.used);
  for (size_t i : {1, 2}) {
    INFO(vs[i].name << ": " << vs[i].reason);
    CHECK(vs[i].status == status_kind::pass);
    CHECK(vs[i].check.rel_l2 <= 1e-6);  // one thread per stage against the baseline's two: not bit-identical
    CHECK(vs[i].pipeline.used);
    CHECK(vs[i].pipeline.threads_per_stage == 1);  // 2 threads over 2 or 3 stages
    CHECK(std::isfinite(vs[i].pipeline.bubble_fraction));
  }
  CHECK(vs[1].description ==
        "encoder split into 2 pipeline stages (cpu, cpu; layers balanced by parameter count), micro-batches "
        "of 3");
  CHECK(vs[2].description ==
        "encoder split into 3 pipeline stages (cpu: 2 layers, cpu: 1 layer, cpu: 1 layer), "
        "micro-batches of 1");
  CHECK(vs[1].pipeline.micro_batches_per_pass ==
        5);  // batches of 4, 4 and 2 rows in micro-batches of 3: 2 + 2 + 1
  CHECK(vs[2].pipeline.stages[0].layer_end == 2);
}

TEST_CASE("a pipeline on CUDA stages: copies, events, the plain executor's logits", "[pipeline][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  torch::InferenceMode inference;
  const torch::Device gpu(torch::kCUDA, 0);
  EncoderClassifier model = make_model(four_layers());
  model->to(gpu);
  const batch b = random_batch(gpu);
  const std::string last = torch::cuda::device_count() > 1 ? "cuda:1" : "cuda:0";
  for (auto attention : {attention_kind::sdpa, attention_kind::naive}) {
    const variant_config v = pipeline_variant({"cuda:0", last, "cpu"}, 3, {2, 1, 1}, attention);
    const torch::Tensor expected = plain_logits(model, gpu, v, b).cpu();
    pipeline_executor pipe(model, gpu, v, testing::plan_alone(v, model->config()), false);
    for (int i = 0; i < 3; ++i) {
      const torch::Tensor got = pipe.forward(b);
      CHECK(got.device() == gpu);
      // Another device's kernels (the CPU stage) agree to fp32 rounding, not bit for bit.
      CHECK(rel_l2(got, expected) <= 1e-5);
    }
    variant_result r;
    r.batches = 1;
    pipe.annotate(r);
    CHECK(r.pipeline.stages[0].shares_weights);
    CHECK(r.pipeline.stages[2].device == "cpu");
    CHECK_FALSE(r.pipeline.stages[2].shares_weights);
    for (const auto& s : r.pipeline.stages) CHECK(s.busy_ms_per_pass > 0);
    CHECK(r.pipeline.bubble_fraction < 1);
  }
  // Two CUDA stages only: the GPU path alone, under fp16 autocast.
  variant_config v = pipeline_variant({"cuda:0", last}, 2, {}, attention_kind::sdpa);
  v.precision = precision_kind::amp_fp16;
  const torch::Tensor expected = plain_logits(model, gpu, v, b);
  pipeline_executor pipe(model, gpu, v, testing::plan_alone(v, model->config()), false);
  CHECK(rel_l2(pipe.forward(b), expected) <= 1e-2);
}

TEST_CASE("a pipeline with a forced SDPA backend: stages share the selection, nothing leaks after",
          "[pipeline]") {
  torch::InferenceMode inference;
  const torch::Device cpu(torch::kCPU);
  EncoderClassifier model = make_model(four_layers());
  const batch b = random_batch(cpu);
  variant_config v = pipeline_variant({"cpu", "cpu"}, 2);
  v.backend = sdpa_backend::math;
  const torch::Tensor expected = plain_logits(model, cpu, v, b);
  const auto before = at::globalContext().userEnabledFlashSDP();
  pipeline_executor pipe(model, cpu, v, testing::plan_alone(v, model->config()), false);
  // Micro-batches of 2 on one thread each round differently from one batch: close, not equal.
  for (int i = 0; i < 2; ++i) CHECK(torch::allclose(pipe.forward(b), expected, 1e-4, 1e-5));
  CHECK(current_sdpa_selection().holders == 0);                // every stage's guard ended
  CHECK(at::globalContext().userEnabledFlashSDP() == before);  // and the flags are back
}

TEST_CASE("a pipeline stage written \"cuda\" is the model's cuda:0: it shares the weights", "[pipeline][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  torch::InferenceMode inference;
  const torch::Device gpu(torch::kCUDA, 0);
  EncoderClassifier model = make_model(four_layers());
  model->to(gpu);
  const batch b = random_batch(gpu);
  const variant_config v = pipeline_variant({"cuda", "cuda"}, 3);
  const torch::Tensor expected = plain_logits(model, gpu, v, b).cpu();
  pipeline_executor pipe(model, gpu, v, testing::plan_alone(v, model->config()), false);
  for (int i = 0; i < 3; ++i) CHECK(torch::allclose(pipe.forward(b).cpu(), expected, 1e-5, 1e-5));
  variant_result r;
  r.batches = 1;
  pipe.annotate(r);
  REQUIRE(r.pipeline.stages.size() == 2);
  for (const auto& s : r.pipeline.stages) {
    CHECK(s.device == "cuda:0");
    CHECK(s.shares_weights);  // no deep copy on the same GPU
  }
}
