// Where a run's weights live (issue 16, part 1): the host model, and the whole model on the
// device only when a variant runs it whole. On the CPU they are one model.
#include "runner/model_placement.hpp"

#include <catch2/catch.hpp>

#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include "runner/measurement_loop.hpp"
#include "runner/offline_scenario.hpp"
#include "techniques/variant_plan.hpp"
#include "test_support.hpp"
#include "workload/dataset.hpp"

using namespace attnbench;

TEST_CASE("on the CPU the host model is the device model: nothing is copied", "[runner]") {
  torch::InferenceMode inference;
  EncoderClassifier host(testing::tiny_model());
  model_placement placement(host, torch::kCPU, /*host_bytes=*/12345);
  CHECK(placement.placed());
  CHECK(placement.on_device().get() == host.get());
  CHECK(placement.device_bytes() == 12345);  // what building the host model allocated
  CHECK(device_allocated_bytes(torch::kCPU) == -1);
}

TEST_CASE("on CUDA the whole model is placed on the first call only, measured", "[runner][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  torch::InferenceMode inference;
  EncoderClassifier host(testing::tiny_model());
  host->init_weights(1);
  host->eval();
  const torch::Device gpu(torch::kCUDA, 0);
  model_placement placement(host, gpu, -1);
  CHECK(!placement.placed());
  CHECK(placement.device_bytes() == -1);
  const EncoderClassifier& whole = placement.on_device();
  CHECK(placement.placed());
  CHECK(whole->parameters().front().device() == gpu);
  CHECK(host->parameters().front().device().is_cpu());  // the host model stays on the host
  int64_t bytes = 0;
  for (const auto& p : whole->parameters()) bytes += static_cast<int64_t>(p.nbytes());
  CHECK(placement.device_bytes() >= bytes);
  CHECK(placement.device_bytes() < bytes + 1024 * 1024);  // the allocator's rounding, nothing more
  CHECK(placement.on_device().get() == whole.get());      // placed once
}

TEST_CASE("a model that does not fit the device: variants that need it whole are SKIPPED as OOM, offload runs",
          "[runner][offload]") {
  // The GPU's path on the CPU: the placement runs out of memory as the caching allocator would
  // under a device_memory_limit the whole model exceeds.
  const config cfg = testing::parse(nlohmann::ordered_json::parse(R"({
    "name": "oom-test",
    "model": {"preset": "bert-mini", "seed": 1},
    "workload": {"samples": 6, "lengths": {"kind": "uniform", "min": 4, "max": 16}, "max_length": 16},
    "measure": {"warmup": 0, "repetitions": 1},
    "device": "cpu",
    "variants": [
      {"name": "offload", "batching": {"batch_size": 4}, "offload": {"prefetch": 1, "target": "cpu"}},
      {"name": "resident", "batching": {"batch_size": 4}},
      {"name": "offload0", "batching": {"batch_size": 4}, "offload": {"prefetch": 0, "target": "cpu"}}
    ],
    "baseline": "offload"
  })"));
  torch::InferenceMode inference;
  const dataset data = make_dataset(cfg.workload, cfg.model);
  EncoderClassifier host(cfg.model);
  host->init_weights(cfg.model.seed);
  host->eval();
  int attempts = 0;
  offline_setup setup;
  setup.device = torch::kCPU;
  setup.model = std::make_shared<model_placement>(
      host, torch::kCPU, -1, [&](const EncoderClassifier&, torch::Device) -> EncoderClassifier {
        ++attempts;
        TORCH_CHECK_WITH(OutOfMemoryError, false, "out of memory (test): the whole model does not fit");
        return nullptr;
      });
  const auto placement = setup.model;
  offline_scenario offline(cfg, plan_variants(cfg, torch::kCPU), data, setup);
  run_result res;
  res.workload.samples = static_cast<int64_t>(data.samples.size());
  res.workload.real_tokens = data.real_tokens();
  REQUIRE(measure_variants(
      cfg, plan_variants(cfg, torch::kCPU), offline, res,
      [](const std::string&, const std::string&, int64_t, int64_t) {},
      [](int64_t, bool more) { return more; }));
  REQUIRE(res.variants.size() == 3);
  CHECK(res.variants[0].status == status_kind::pass);
  CHECK(res.variants[1].status == status_kind::skipped);
  CHECK(res.variants[1].reason.rfind("OOM: ", 0) == 0);
  CHECK_THAT(res.variants[1].reason, Catch::Matchers::Contains("out of memory (test)"));
  CHECK(res.variants[2].status == status_kind::pass);  // the run went on after the OOM
  CHECK(res.variants[2].check.max_abs == 0);
  CHECK(attempts == 1);  // only the variant that needs the whole model tried to place it
  CHECK(!placement->placed());
}
