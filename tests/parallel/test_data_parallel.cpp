// Data parallelism in one process: worker threads with their own replicas and thread counts give
// the single-worker outputs; config errors; a run with a parallel variant reports per worker.
#include "parallel/data_parallel_executor.hpp"

#include <catch2/catch.hpp>

#include <numeric>

#include <ATen/Context.h>
#include <thread>

#include "check/output_check.hpp"
#include "core/sdpa_backend_guard.hpp"
#include "runner/memory_tracker.hpp"
#include "runner/runner.hpp"
#include "techniques/variant_plan.hpp"
#include "test_support.hpp"
#include "workload/static_batching.hpp"

using namespace attnbench;
using Catch::Matchers::Contains;

namespace {

nlohmann::ordered_json parallel_doc(const nlohmann::ordered_json& parallel) {
  auto doc = nlohmann::ordered_json::parse(R"({
    "name": "parallel-test",
    "model": {"preset": "bert-tiny", "seed": 3},
    "workload": {"samples": 13, "lengths": {"kind": "uniform", "min": 4, "max": 40}, "max_length": 40},
    "measure": {"warmup": 0, "repetitions": 2},
    "device": "cpu",
    "threads": 2,
    "check": {"tolerances": {"fp32": 1e-6}},
    "variants": [
      {"name": "base", "batching": {"batch_size": 4}},
      {"name": "dp", "batching": {"batch_size": 4}}
    ],
    "baseline": "base"
  })");
  doc["variants"][1]["parallel"] = parallel;
  return doc;
}

// Two CPU workers × 1 thread over bert-tiny: the config, its workload, the model and every row.
struct two_cpu_workers {
  config cfg = testing::parse(parallel_doc({{"devices", {"cpu", "cpu"}}, {"threads_per_worker", 1}}));
  dataset data = make_dataset(cfg.workload, cfg.model);
  EncoderClassifier model{cfg.model};
  std::vector<int64_t> rows;
  static_batching batching{cfg.variants[1].batching.batch_size, cfg.variants[1].batching.padding,
                           cfg.workload.max_length};

  // The executor over every row (under the caller's inference mode, as the runner builds it).
  std::unique_ptr<data_parallel_executor> executor() const {
    return std::make_unique<data_parallel_executor>(model, cfg.variants[1],
                                                    plan_variant(cfg, cfg.variants[1], torch::kCPU), false,
                                                    data, rows, batching, false);
  }

  two_cpu_workers() : rows(data.samples.size()) {
    torch::InferenceMode inference;
    model->init_weights(cfg.model.seed);
    model->eval();
    std::iota(rows.begin(), rows.end(), 0);
  }
};

}  // namespace

TEST_CASE("data parallel threads: two CPU workers, one thread each, outputs of one worker", "[parallel]") {
  const two_cpu_workers f;
  const config& cfg = f.cfg;
  const dataset& data = f.data;
  torch::InferenceMode inference;
  EncoderClassifier model = f.model;  // the same module: a holder shares it
  const std::vector<int64_t>& rows = f.rows;

  const int before = at::get_num_threads();
  const auto executor = f.executor();
  data_parallel_executor& dp = *executor;
  CHECK(dp.worker_threads() == std::vector<int64_t>{1, 1});  // each worker its own share …
  CHECK(at::get_num_threads() == before);                   // … and the caller keeps its own,
  int later = 0;                                            // … as does a thread started afterwards
  std::thread([&] { later = at::get_num_threads(); }).join();
  CHECK(later == before);

  const whole_pass p = dp.run_pass(true);
  REQUIRE(p.outputs.defined());
  REQUIRE(p.outputs.size(0) == static_cast<int64_t>(data.samples.size()));
  auto sorted = p.sample_index;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == rows);  // every sample once
  CHECK(p.batch_ms.size() == dp.plans().size());

  // The reference: the same model, one batch of everything.
  input_assembler assemble(data, torch::kCPU, false);
  const batch all = assemble.assemble(batch_plan{rows, cfg.workload.max_length});
  const auto reference = model->forward(all.input_ids, all.padding_mask);
  const auto ours = torch::zeros_like(reference).index_copy_(0, torch::tensor(p.sample_index), p.outputs);
  const double rel = (ours - reference).norm().item<double>() / reference.norm().item<double>();
  CHECK(rel <= 1e-6);
}

TEST_CASE("data parallel threads: a pass that discards its outputs gathers none, as the plain executor's",
          "[parallel][timed-work]") {
  const two_cpu_workers f;
  torch::InferenceMode inference;
  const auto executor = f.executor();
  data_parallel_executor& dp = *executor;
  const whole_pass timed = dp.run_pass(false);
  CHECK(!timed.outputs.defined());
  CHECK(timed.sample_index.empty());
  CHECK(timed.batch_ms.size() == dp.plans().size());  // the work itself was done
  CHECK(dp.worker_outputs_gathered() == 0);          // no worker copied or concatenated outputs
  const whole_pass check = dp.run_pass(true);
  CHECK(check.outputs.defined());
  CHECK(dp.worker_outputs_gathered() == 2);
}

TEST_CASE("data parallel threads in a run: PASS against the baseline, per-worker report", "[parallel][runner]") {
  const config cfg = testing::parse(parallel_doc({{"devices", {"cpu", "cpu"}}}));
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  const variant_result& v = out.result.variants[1];
  CHECK(v.status == status_kind::pass);
  CHECK(v.check.rel_l2 <= 1e-6);
  REQUIRE(v.parallel.used);
  CHECK(v.parallel.mode == "threads");
  CHECK(v.parallel.world_size == 2);
  REQUIRE(v.parallel.workers.size() == 2);
  CHECK(v.parallel.workers[0].samples + v.parallel.workers[1].samples == 13);
  CHECK(v.parallel.workers[0].threads == 1);  // threads 2 ÷ 2 workers
  CHECK(v.parallel.workers[0].median_s > 0);
  CHECK(v.parallel.imbalance >= 1.0);
  CHECK(v.throughput.n == 2);
  CHECK_THAT(v.description, Contains("2 worker threads"));
  CHECK(!out.result.variants[0].parallel.used);
}

TEST_CASE(
    "data parallel threads: worker figures count timed passes only, a pass ends with its outputs gathered",
    "[parallel]") {
  const two_cpu_workers f;
  torch::InferenceMode inference;
  const auto executor = f.executor();
  data_parallel_executor& dp = *executor;
  dp.begin_phase(pass_phase::check);
  dp.run_pass(true);
  dp.begin_phase(pass_phase::warmup);
  for (int i = 0; i < 3; ++i) dp.run_pass(false);
  dp.begin_phase(pass_phase::timed);
  std::vector<double> pass_s;
  for (int i = 0; i < 2; ++i) pass_s.push_back(dp.run_pass(false).seconds);
  const auto workers = dp.worker_pass_seconds();
  REQUIRE(workers.size() == 2);
  for (const auto& w : workers) {
    REQUIRE(w.size() == 2);  // the check and the three warm-up passes are not among them
    // The pass spans every worker's compute and the gather after it.
    for (size_t k = 0; k < w.size(); ++k) CHECK(pass_s[k] >= w[k]);
  }
}

TEST_CASE("data parallel threads: peak memory covers every worker thread", "[parallel][runner]") {
  auto doc = parallel_doc({{"devices", {"cpu", "cpu"}}, {"threads_per_worker", 1}});
  const config cfg = testing::parse(doc);
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  const variant_result& base = out.result.variants[0];
  const variant_result& dp = out.result.variants[1];
  REQUIRE(base.peak_memory_bytes > 0);
  // The same batches, on two threads at once: at least one batch's working memory. Counted on
  // the calling thread alone it was a few hundred bytes (the gathered outputs).
  CHECK(dp.peak_memory_bytes >= base.peak_memory_bytes / 2);
  CHECK(dp.peak_memory_method == base.peak_memory_method);
}

TEST_CASE("pipeline stages on CPU threads: peak memory covers every stage", "[parallel][runner]") {
  auto doc = parallel_doc({{"devices", {"cpu", "cpu"}}});
  doc["variants"][1].erase("parallel");
  doc["variants"][1]["pipeline"] = {{"stages", {"cpu", "cpu"}}, {"micro_batch", 2}};
  const config cfg = testing::parse(doc);
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  const variant_result& pipe = out.result.variants[1];
  CHECK(pipe.status == status_kind::pass);
  CHECK(pipe.peak_memory_bytes >= out.result.variants[0].peak_memory_bytes / 4);  // CPU stages: covered
}

TEST_CASE("work on a second device is not covered by the run device's peak: n/a with the reason",
          "[parallel][runner]") {
  variant_config vc;
  CHECK(!memory_not_covered(vc, torch::Device("cpu")));
  vc.pipeline = pipeline_config{};
  vc.pipeline->stages = {"cpu", "cpu"};
  CHECK(!memory_not_covered(vc, torch::Device("cpu")));
  vc.pipeline->stages = {"cuda", "cuda:1"};
  const auto why = memory_not_covered(vc, torch::Device("cuda:0"));
  REQUIRE(why);
  CHECK_THAT(*why, Contains("cuda:1") && !Contains("cuda,"));  // "cuda" is cuda:0, the run's device
  vc.pipeline.reset();
  vc.parallel = parallel_config{};
  vc.parallel->devices = {"cuda:0", "cuda:1"};
  CHECK(memory_not_covered(vc, torch::Device("cuda:0")));
}

TEST_CASE("a variant's devices: canonical, distinct, the run's first, each is measured on its own",
          "[parallel][runner]") {
  const torch::Device cuda0(torch::kCUDA, 0), cuda1(torch::kCUDA, 1), cpu(torch::kCPU);
  variant_config vc;
  CHECK(variant_devices(vc, cuda0) == std::vector<torch::Device>{cuda0});
  vc.pipeline = pipeline_config{};
  vc.pipeline->stages = {"cuda", "cuda:1", "cpu"};  // "cuda" is the run's cuda:0, not a second device
  CHECK(variant_devices(vc, torch::Device("cuda")) == std::vector<torch::Device>{cuda0, cuda1, cpu});
  vc.pipeline.reset();
  vc.parallel = parallel_config{};
  vc.parallel->devices = {"cuda:1", "cuda:1", "cuda:0"};
  CHECK(variant_devices(vc, cuda0) == std::vector<torch::Device>{cuda0, cuda1});
  vc.parallel->mode = parallel_mode::processes;  // a rank measures its own process
  CHECK(variant_devices(vc, cuda0) == std::vector<torch::Device>{cuda0});
}

TEST_CASE("the peak scope measures every device it is given, each from its own start", "[parallel][runner]") {
  // On the CPU only the CPU can be measured; a device the scope was not given has no figure.
  torch::InferenceMode inference;
  const peak_memory_scope scope(torch::kCPU, {torch::Device(torch::kCPU)});
  const auto t = torch::empty({1024, 1024}, torch::kFloat);  // 4 MiB
  CHECK(scope.peak_bytes_on(torch::kCPU) >= 4 * 1024 * 1024);
  CHECK(scope.peak_bytes_on(torch::kCPU) == scope.peak_bytes());
  CHECK(scope.peak_bytes_on(torch::Device(torch::kCUDA, 1)) == -1);
}

TEST_CASE("devices all without a GPU is skipped as needing an accelerator", "[parallel][runner]") {
  const config cfg = testing::parse(parallel_doc({{"devices", "all"}}));
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  CHECK(out.result.variants[1].status == status_kind::skipped);
  CHECK_THAT(out.result.variants[1].reason, Contains("needs an accelerator"));
}

TEST_CASE("a processes-mode variant in a single process is SKIPPED with how to start it", "[parallel][runner]") {
  const config cfg = testing::parse(parallel_doc({{"mode", "processes"}}));
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(cfg, opts);
  CHECK(out.result.variants[1].status == status_kind::skipped);
  CHECK_THAT(out.result.variants[1].reason, Contains("attnbench launch --nproc"));
  CHECK(out.result.variants[0].status == status_kind::pass);
}

TEST_CASE("bad parallel blocks are config errors with their path", "[parallel][config]") {
  const auto first = [](const nlohmann::ordered_json& block) {
    const auto problems = testing::problems_of(parallel_doc(block));
    REQUIRE(!problems.empty());
    return problems.front().to_string();
  };
  CHECK_THAT(first({{"threads_per_worker", 1}}), Contains("variants[1].parallel.devices: required"));
  CHECK_THAT(first({{"devices", {"cpu", "cuda:1"}}}), Contains("variants[1].parallel.devices[1]"));
  CHECK_THAT(first({{"devices", {"cpu", "tpu"}}}), Contains("expected \"cpu\", \"cuda\" or \"cuda:N\""));
  CHECK_THAT(first({{"devices", nlohmann::ordered_json::array()}}), Contains("non-empty array"));
  CHECK_THAT(first({{"devices", {"cpu"}}, {"threads_per_worker", 0}}), Contains("threads_per_worker"));
  CHECK_THAT(first({{"mode", "processes"}, {"devices", {"cpu"}}}), Contains("attnbench launch --nproc"));
  CHECK_THAT(first({{"mode", "ranks"}}), Contains("variants[1].parallel.mode"));
  CHECK_THAT(first({{"devices", {"cpu"}}, {"worker", 2}}), Contains("unknown key"));

  auto with_offload = parallel_doc({{"devices", {"cpu", "cpu"}}});
  with_offload["variants"][1]["offload"] = {{"target", "cpu"}};
  CHECK_THAT(testing::problems_of(with_offload).front().to_string(), Contains("not supported"));

  auto bad_timeout = parallel_doc({{"mode", "processes"}});
  bad_timeout["distributed"] = {{"timeout_s", 0}};
  CHECK_THAT(testing::problems_of(bad_timeout).front().to_string(), Contains("distributed.timeout_s"));
  bad_timeout["distributed"] = {{"backend", "nccl"}};
  CHECK_THAT(testing::problems_of(bad_timeout).front().to_string(), Contains("NCCL needs CUDA"));
}

TEST_CASE("data-parallel workers with a forced SDPA backend: outputs as one thread's, the flags restored after",
          "[parallel][runner]") {
  // Both workers' attention calls select "math" at once: they share the selection (before, each
  // call saved and restored the process-wide flags, so one worker could restore them under the
  // other's call and a forced backend could be lost, or leak to the next variant).
  auto doc = parallel_doc({{"devices", {"cpu", "cpu"}}, {"threads_per_worker", 1}});
  doc["variants"][0]["sdpa_backend"] = "math";
  doc["variants"][1]["sdpa_backend"] = "math";
  doc["variants"].push_back(nlohmann::ordered_json::parse(R"({"name": "after", "batching": {"batch_size": 4}})"));
  const bool flash_before = at::globalContext().userEnabledFlashSDP();
  run_options opts;
  opts.measure_ceilings = false;
  const run_outcome out = run_experiment(testing::parse(doc), opts);
  const auto& vs = out.result.variants;
  CHECK(vs[1].status == status_kind::pass);
  CHECK(vs[1].sdpa_backend_used == "math");
  CHECK(vs[2].status == status_kind::pass);  // the next variant runs under the flags as they were
  CHECK(current_sdpa_selection().holders == 0);
  CHECK(at::globalContext().userEnabledFlashSDP() == flash_before);
}
