// "precision": "bf16" | "fp16" (techniques/cast_precision.cpp), reached only through the open path:
// the config catalog, the technique registry and the metric record. Validated against the fp32
// model before any timing: its outputs within the tolerance, the weights cast once (the run's
// shared model untouched), and its metrics in the record.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <torch/cuda.h>

#include "config/config_parser.hpp"
#include "plan_support.hpp"
#include "runner/executor_base.hpp"
#include "runner/runner.hpp"
#include "techniques/executor_batch.hpp"
#include "techniques/registry.hpp"
#include "techniques/variant_plan.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

const char* cast_run = R"({
  "name": "cast-test",
  "model": {"preset": "bert-tiny", "seed": 7},
  "workload": {"samples": 10, "lengths": {"kind": "uniform", "min": 4, "max": 24}, "max_length": 32, "seed": 3},
  "measure": {"warmup": 1, "repetitions": 2},
  "device": "cpu",
  "variants": [
    {"name": "fp32", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "amp", "precision": "amp-bf16", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "bf16", "precision": "bf16", "attention": "sdpa", "batching": {"batch_size": 4, "padding": "longest"}},
    {"name": "fp16", "precision": "fp16", "attention": "naive", "batching": {"batch_size": 4, "padding": "longest"}}
  ],
  "baseline": "fp32",
  "output": {"dir": "unused"}
})";

const metric& metric_named(const variant_result& r, const std::string& name) {
  const metric* m = find_metric(r.metrics, name);
  INFO("metric " << name << " of " << r.name);
  REQUIRE(m != nullptr);
  return *m;
}

}  // namespace

TEST_CASE("cast precision: registered, and its variants run through the registry", "[techniques][precision]") {
  const config cfg = attnbench::testing::parse_owned(cast_run, "", testing::cpu_only());
  const variant_config& bf16 = *find_variant(cfg, "bf16");
  const variant_plan plan = plan_variant(cfg, bf16, torch::kCPU);
  REQUIRE(plan.owner != nullptr);
  CHECK(plan.owner->name() == "cast-precision");
  const variant_plan amp = plan_variant(cfg, *find_variant(cfg, "amp"), torch::kCPU);
  CHECK(amp.owner == nullptr);  // autocast stays built in
  CHECK(amp.precision.autocast == torch::kBFloat16);
  CHECK(bf16.precision == precision_kind::fp32);  // no autocast under the cast copy
  CHECK_FALSE(plan.precision.autocast.has_value());
  CHECK(plan.precision.label == "bf16");
  CHECK(plan.precision.dtype == "bf16");
  CHECK(plan.precision.activations == torch::kBFloat16);
  CHECK(plan_variant(cfg, *find_variant(cfg, "fp16"), torch::kCPU).precision.dtype == "fp16");
  CHECK(plan.description.find("cast once to bf16") != std::string::npos);
  // One tolerance per precision class (common/precision_classes.hpp): the cast and autocast alike.
  CHECK(plan.precision.tolerance == amp.precision.tolerance);
}

namespace {

// The executor's outputs against the fp32 model on `device`, and its metrics.
void check_cast_executor(torch::Device device, const std::string& precision) {
  const config cfg = attnbench::testing::parse_owned(cast_run, "", testing::cpu_only());
  torch::InferenceMode guard;
  EncoderClassifier model(cfg.model);
  model->init_weights(cfg.model.seed);
  model->eval();
  model->to(device);
  auto exec = testing::planned_executor(model, device, cfg, *find_variant(cfg, precision));
  for (const auto& p : model->parameters()) CHECK(p.scalar_type() == torch::kFloat);

  const batch b = testing::padded_batch(5, 20, 2, 9, device);
  const auto reference = model->forward(b.input_ids, b.padding_mask);
  const auto out = exec->forward(b);
  CHECK(out.scalar_type() == torch::kFloat);
  const double rel_l2 = ((out - reference).norm() / reference.norm()).item<double>();
  INFO(precision << " on " << device.str() << ": relative L2 " << rel_l2);
  CHECK(rel_l2 > 0);  // it did run in 16 bits
  CHECK(rel_l2 < plan_variant(cfg, *find_variant(cfg, precision), device).precision.tolerance);

  variant_result r;
  exec->annotate(r);
  const metric& bytes = metric_named(r, "cast_weight_bytes");
  CHECK(bytes.value == Approx(2.0 * static_cast<double>(parameter_count(*model))));  // 2 bytes a parameter
  CHECK(bytes.unit == "bytes");
  CHECK(bytes.direction == metric_direction::lower_is_better);
  CHECK(metric_named(r, "cast_ms").value > 0);
}

}  // namespace

TEST_CASE("cast precision: the executor casts a copy once and leaves the shared model fp32",
          "[techniques][precision]") {
  check_cast_executor(torch::kCPU, "bf16");
  check_cast_executor(torch::kCPU, "fp16");
}

TEST_CASE("cast precision on CUDA: bf16 and fp16 within tolerance of fp32", "[gpu][precision]") {
  if (!torch::cuda::is_available()) return testing::skip_test(testing::no_gpu);
  check_cast_executor(torch::Device(torch::kCUDA, 0), "bf16");
  check_cast_executor(torch::Device(torch::kCUDA, 0), "fp16");
}

TEST_CASE("cast precision: a run checks bf16 and fp16 against fp32 and reports their metrics",
          "[techniques][precision][runner]") {
  const config cfg = attnbench::testing::parse_owned(cast_run, "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  const run_result r = run_experiment(cfg, opts).result;
  REQUIRE(r.variants.size() == 4);
  CHECK(r.all_passed());
  for (const char* name : {"bf16", "fp16"}) {
    const variant_result& v = *std::find_if(r.variants.begin(), r.variants.end(),
                                            [&](const variant_result& x) { return x.name == name; });
    INFO(name << ": " << v.reason);
    CHECK(v.status == status_kind::pass);
    CHECK(v.precision == name);
    CHECK(v.check.rel_l2 > 0);
    CHECK(v.check.tolerance == plan_variant(cfg, *find_variant(cfg, name), torch::kCPU).precision.tolerance);
    CHECK(v.description.find(std::string("cast once to ") + name) != std::string::npos);
    CHECK(metric_named(v, "cast_weight_bytes").value > 0);
  }
  // AMP reports none of the cast's metrics: the device-memory ones every variant has, and its own
  // weights cast once (techniques/plain_executor.hpp).
  for (const auto& m : r.variants[1].metrics) {
    INFO(m.name);
    CHECK((m.source == "memory" || m.source == "amp"));
    CHECK(m.name.rfind("cast_", 0) != 0);
  }
  CHECK(find_metric(r.variants[1].metrics, "amp_weight_bytes") != nullptr);
}

TEST_CASE("cast precision: a perturbed cast variant fails its check", "[techniques][precision][runner]") {
  const config cfg = attnbench::testing::parse_owned(cast_run, "", testing::cpu_only());
  run_options opts;
  opts.measure_ceilings = false;
  opts.perturb_variant = "bf16";
  const run_result r = run_experiment(cfg, opts).result;
  CHECK(r.variants[2].status == status_kind::fail);
  CHECK(r.variants[3].status == status_kind::pass);
}
